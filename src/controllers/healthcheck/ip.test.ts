import { describe, expect, test } from "bun:test";
import { IpParseError, parseIp, parsePrefixAddr, sameIp } from "./ip.ts";

describe("parseIp", () => {
  test.each([
    ["10.0.0.5", "10.0.0.5"],
    ["0.0.0.0", "0.0.0.0"],
    ["2001:DB8::1", "2001:db8::1"],
    ["2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"],
    ["2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"],
    ["::", "::"],
    ["::1", "::1"],
    ["1::", "1::"],
    ["2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"],
    ["::ffff:10.0.0.5", "::ffff:10.0.0.5"],
    ["64:ff9b::10.0.0.5", "64:ff9b::a00:5"],
    ["fe80::1%eth0", "fe80::1"],
  ])("should read %p as %p", (input, text) => {
    expect(parseIp(input).text).toBe(text);
  });
  test.each([
    "",
    "10.0.0",
    "10.0.0.256",
    "010.0.0.5",
    "10.0.0.5 ",
    "1:2:3:4:5:6:7:8:9",
    "1::2::3",
    "12345::",
    "1:2:3:4:5:6:7::8",
    "fe80::1%",
    "g::1",
    "localhost",
  ])("should refuse %p", (input) => {
    expect(() => parseIp(input)).toThrow(IpParseError);
  });
  test("should tell an IPv4 address from its IPv4-mapped IPv6 form", () => {
    expect(sameIp(parseIp("10.0.0.5"), parseIp("::ffff:10.0.0.5"))).toBe(false);
    expect(sameIp(parseIp("2001:db8::1"), parseIp("2001:DB8:0::1"))).toBe(true);
  });
});

describe("parsePrefixAddr", () => {
  test.each([
    ["10.0.0.5/24", "10.0.0.5"],
    ["fe80::1/64", "fe80::1"],
    ["::1/128", "::1"],
  ])("should take the address of %p", (input, text) => {
    expect(parsePrefixAddr(input).text).toBe(text);
  });
  test.each(["10.0.0.5", "10.0.0.5/33", "10.0.0.5/", "10.0.0.5/024", "fe80::1%eth0/64", "::1/129"])("should refuse %p", (input) => {
    expect(() => parsePrefixAddr(input)).toThrow(IpParseError);
  });
});
