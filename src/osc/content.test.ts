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
    expect(() => decodeInline(enc, "x")).toThrow(new InvalidCodecError());
    expect(() => decodeInline(enc, "x")).toThrow('invalid file codec id: expected "" or "b64"');
  });

  test("should name what is accepted, never the encoding found (the field is free text)", () => {
    const secret = "sk-live-4f9a8b7c6d5e";
    expect(() => decodeInline(secret, "x")).toThrow(InvalidCodecError);
    try {
      decodeInline(secret, "x");
    } catch (err) {
      expect((err as Error).message).not.toContain(secret);
      expect(JSON.stringify(err)).not.toContain(secret);
    }
  });

  test.each([["ZmlsZTI"], ["Zm!sZTI="], ["ZmlsZTI= "], ["Zm l sZTI="], ["ZmlsZTI==="], ["-_-_"]])(
    "should reject invalid base64 %p",
    (data) => {
      expect(() => decodeBase64Strict(data)).toThrow(Base64Error);
    },
  );
});

describe("decodeBase64Strict of small texts", () => {
  test.each([
    ["QR==", "A"],
    ["QUJ=", "AB"],
    ["QUJD", "ABC"],
  ])("should accept stray bits in the last quantum of %p as before, decoding it to %p", (data, want) => {
    expect(text(decodeBase64Strict(data))).toBe(want);
  });

  test("should decode every short text the character check accepts and reject the others", () => {
    // All texts of up to 4 characters over a few valid and invalid ones: the result is Buffer's decoding
    // exactly when no character is out of place (the offsets as the character check names them).
    const chars = ["A", "Q", "/", "=", "!", "-"];
    const texts = [""];
    for (let n = 0; n < 4; n++) for (const t of texts.filter((x) => x.length === n)) for (const c of chars) texts.push(t + c);
    const valid = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
    for (const data of texts) {
      if (valid.test(data)) expect(Buffer.from(decodeBase64Strict(data)).equals(Buffer.from(data, "base64"))).toBe(true);
      else expect(() => decodeBase64Strict(data)).toThrow(Base64Error);
    }
  });

  test.each([
    ["at the end", `${"QUJD".repeat(1000)}QR=!`, 4003],
    ["in the middle", `${"QUJD".repeat(500)}Q!JD${"QUJD".repeat(500)}`, 2001],
  ])("should name the offset of a bad character %s of a small text", (_where, data, offset) => {
    expect(() => decodeBase64Strict(data)).toThrow(new Base64Error(`illegal base64 data at input byte ${offset}`));
  });
});

describe("decodeBase64Strict of large data", () => {
  test("should decode more than 10 M characters", () => {
    const bytes = new Uint8Array(7_600_000).map((_, i) => (i * 31) & 0xff);
    const data = Buffer.from(bytes).toString("base64");
    expect(data.length).toBeGreaterThan(10_000_000);
    expect(Buffer.from(decodeBase64Strict(data)).equals(Buffer.from(bytes))).toBe(true);
  });

  test("should name the offset of the first bad character in large data, not the data", () => {
    const data = `${"QUJD".repeat(3_000_000)}!${"QUJD".repeat(10)}`;
    expect(() => decodeBase64Strict(data)).toThrow(new Base64Error("illegal base64 data at input byte 12000000"));
  });

  test.each([
    ["padding in the middle", "YQ==YQ==", 2],
    ["three padding characters", "Y===", 1],
    ["a missing padding character", "YQ=", 2],
  ])("should name the offset for %s", (_what, data, offset) => {
    expect(() => decodeBase64Strict(data)).toThrow(new Base64Error(`illegal base64 data at input byte ${offset}`));
  });
});
