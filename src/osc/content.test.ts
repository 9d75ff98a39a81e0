import { describe, expect, test } from "bun:test";
import { decodeBase64Strict, decodeInline } from "./content.ts";
import { Base64Error, InvalidCodecError } from "./errors.ts";

const text = (b: Uint8Array) => new TextDecoder().decode(b);

describe("decodeInline", () => {
  test.each([
    ["", "file1", "file1"],
    ["b64", "ZmlsZTI=", "file2"],
    ["b64", "ZmlsZT\r\nI=\n", "file2"],
    ["b64", "", ""],
    ["b64", "YWJj", "abc"],
  ])("should decode encoding %p data %p", (enc, data, want) => {
    expect(text(decodeInline(enc, data))).toBe(want);
  });

  test.each([["gzip"], ["base64"], ["B64"]])("should reject encoding %p", (enc) => {
    expect(() => decodeInline(enc, "x")).toThrow(new InvalidCodecError(enc));
    expect(() => decodeInline(enc, "x")).toThrow(`invalid file codec id "${enc}"`);
  });

  test.each([["ZmlsZTI"], ["Zm!sZTI="], ["ZmlsZTI= "], ["Zm l sZTI="], ["ZmlsZTI==="], ["-_-_"]])(
    "should reject invalid base64 %p",
    (data) => {
      expect(() => decodeBase64Strict(data)).toThrow(Base64Error);
    },
  );
});
