import { describe, expect, test } from "bun:test";
import { TokenDataError, tokenBytes, TokenMissingError } from "./token-data.ts";

const secret = (data: unknown) => ({ metadata: { name: "s" }, data });

describe("tokenBytes", () => {
  test("should decode data.token", () => {
    expect(new TextDecoder().decode(tokenBytes(secret({ token: btoa("abc") })))).toBe("abc");
  });
  test.each([
    ["absent data", undefined],
    ["null data", null],
    ["no token key", { other: btoa("x") }],
    ["an empty token", { token: "" }],
  ])("should report a missing token for %s", (_what, data) => {
    expect(() => tokenBytes(secret(data))).toThrow(new TokenMissingError());
    expect(() => tokenBytes(secret(data))).toThrow('secret key "token" does not exist or is empty');
  });
  test("should reject data that is not base64", () => {
    expect(() => tokenBytes(secret({ token: "not base64!" }))).toThrow(TokenDataError);
  });
  test("should reject data that is not a string map", () => {
    expect(() => tokenBytes(secret({ token: 5 }))).toThrow(TokenDataError);
  });
});
