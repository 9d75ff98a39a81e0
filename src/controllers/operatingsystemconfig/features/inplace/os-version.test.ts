import { describe, expect, test } from "bun:test";
import { OsVersionError, osVersionsEqual, parseOsVersion } from "./os-version.ts";

describe("parseOsVersion", () => {
  test.each([
    ['NAME="Garden Linux"\nPRETTY_NAME="Garden Linux 1592.6"\n', "1592.6"],
    ['PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nVERSION_ID="12"\n', "12"],
    ["PRETTY_NAME=Ubuntu 24.04.1 LTS\n", "24.04.1"],
    ["PRETTY_NAME='Garden Linux 1877.0'\n", "1877.0"],
  ])("should read %p as %p", (text, want) => {
    expect(parseOsVersion(text)).toBe(want);
  });

  test("should fail when PRETTY_NAME has no version", () => {
    expect(() => parseOsVersion('PRETTY_NAME="Garden Linux 1592Foo"\n')).toThrow("unable to find version");
  });

  test("should fail without PRETTY_NAME", () => {
    expect(() => parseOsVersion('NAME="x"\n')).toThrow(OsVersionError);
  });
});

describe("osVersionsEqual", () => {
  test.each([
    ["1.2", "1.2.0", true],
    ["1.2.0-foo.12", "1.2.0", true],
    ["v1.2.0", "1.2.0+build", true],
    ["1592.6", "1592.6.0", true],
    ["1.1.0", "1.2.0", false],
    ["1592.6", "1592.7", false],
    ["garbage", "1.2.0", false],
  ])("should compare current %p with desired %p as %p", (current, desired, want) => {
    expect(osVersionsEqual(current, desired)).toBe(want);
  });

  test("should fail on an unparsable desired version", () => {
    expect(() => osVersionsEqual("1.2.0", "invalid")).toThrow('invalid desired operating system version "invalid"');
  });
});
