import { describe, expect, test } from "bun:test";
import { MessageWriter, messageFields, ProtobufError, readFields, stringField, varintField } from "./protobuf.ts";

describe("protobuf wire format", () => {
  test("should encode strings, varints and nested messages as protoc does", () => {
    // PodSandboxMetadata{name: "a", uid: "b", attempt: 300} → 0a 01 61 12 01 62 20 ac 02
    const meta = new MessageWriter().string(1, "a").string(2, "b").string(3, "").varint(4, 300);
    expect([...meta.finish()]).toEqual([0x0a, 0x01, 0x61, 0x12, 0x01, 0x62, 0x20, 0xac, 0x02]);
    const outer = new MessageWriter().message(1, meta).varint(2, false);
    expect([...outer.finish()]).toEqual([0x0a, 0x09, 0x0a, 0x01, 0x61, 0x12, 0x01, 0x62, 0x20, 0xac, 0x02]);
  });

  test("should read back what it wrote and skip unknown fixed-width fields", () => {
    const inner = new MessageWriter().string(1, "pod");
    const bytes = new MessageWriter()
      .message(1, inner)
      .message(1, inner)
      .varint(3, 1)
      .varint(4, 2n ** 63n)
      .finish();
    const withFixed = Uint8Array.from([...bytes, 0x29, 1, 2, 3, 4, 5, 6, 7, 8, 0x35, 1, 2, 3, 4]);
    const fields = readFields(withFixed);
    expect(messageFields(fields, 1).map((b) => stringField(readFields(b), 1))).toEqual(["pod", "pod"]);
    expect(varintField(fields, 3)).toBe(1n);
    expect(varintField(fields, 4)).toBe(2n ** 63n);
    expect(stringField(fields, 9)).toBe("");
  });

  test("should encode a map field as one entry message per pair", () => {
    const bytes = new MessageWriter().map(6, { k: "v" }).finish();
    expect([...bytes]).toEqual([0x32, 0x06, 0x0a, 0x01, 0x6b, 0x12, 0x01, 0x76]);
  });

  test("should refuse truncated input", () => {
    expect(() => readFields(Uint8Array.from([0x0a, 0x05, 0x61]))).toThrow(ProtobufError);
    expect(() => readFields(Uint8Array.from([0x08, 0x80]))).toThrow("truncated varint");
  });
});
