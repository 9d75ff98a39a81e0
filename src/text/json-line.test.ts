import { describe, expect, test } from "bun:test";
import { JsonLineAssembler, LongBase64 } from "./json-line.ts";

const mib = 1024 * 1024;

/** Feeds `text` in chunks of `size` bytes (a last shorter one) and parses it. */
function assemble(text: string, size: number): unknown {
  const bytes = new TextEncoder().encode(text);
  const a = new JsonLineAssembler();
  for (let i = 0; i < bytes.length; i += size) a.add(bytes.subarray(i, i + size));
  return a.end();
}

/** The value with every LongBase64 replaced by its text: what JSON.parse returns. */
const asText = (v: unknown): unknown =>
  v instanceof LongBase64
    ? v.text()
    : Array.isArray(v)
      ? v.map(asText)
      : v !== null && typeof v === "object"
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, asText(x)]))
        : v;

/** Base64 of `n` bytes of varied content. */
const base64Of = (n: number): string => Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + (i >> 8)) & 0xff)).toString("base64");

describe("JsonLineAssembler", () => {
  test.each([1, 7, 65_536])("should parse a small text as JSON.parse does (chunks of %d)", (size) => {
    const text = '{"type":"MODIFIED","object":{"a":"x\\"y\\\\","b":[1,2.5,null,true],"c":"ä€ \\u00e9"}}';
    expect(assemble(text, size)).toEqual(JSON.parse(text));
  });

  test.each([
    { bytes: 3 * mib, size: 65_536 },
    { bytes: 3 * mib + 1, size: 4093 },
    { bytes: 3 * mib + 2, size: 1_000_003 },
  ])("should decode a long base64 value as it streams in ($bytes bytes, chunks of $size)", ({ bytes, size }) => {
    const b64 = base64Of(bytes);
    const text = `{"object":{"metadata":{"name":"s"},"data":{"osc.yaml":"${b64}","small":"YQ=="}}}`;
    const parsed = assemble(text, size) as { object: { data: Record<string, unknown> } };
    const long = parsed.object.data["osc.yaml"];
    expect(long).toBeInstanceOf(LongBase64);
    expect(Buffer.from((long as LongBase64).bytes).equals(Buffer.from(b64, "base64"))).toBe(true);
    expect((long as LongBase64).text()).toBe(b64);
    expect(parsed.object.data["small"]).toBe("YQ==");
  });

  test("should give back a last quantum's characters as they were (non-zero trailing bits)", () => {
    const b64 = `${base64Of(3 * mib)}QR==`;
    const long = (assemble(`["${b64}"]`, 65_536) as unknown[])[0] as LongBase64;
    expect(long.text()).toBe(b64);
    expect(Buffer.from(long.bytes).equals(Buffer.from(b64, "base64"))).toBe(true);
  });

  test.each([
    { name: "a character outside the alphabet", tail: "!abc" },
    { name: "an escape", tail: "\\/AAA" },
    { name: "a line break escape", tail: "\\nAAAA" },
    { name: "an unfinished quantum", tail: "AB" },
    { name: "padding in the middle", tail: "AA==AAAA" },
    { name: "three padding characters", tail: "A===" },
    { name: "padding after a complete quantum", tail: "=" },
    { name: "non-ASCII", tail: "ÄÖÜ=" },
  ])("should keep a long string with $name as text", ({ tail }) => {
    for (const at of [0.5, 1]) {
      const b64 = base64Of(3 * mib);
      const cut = Math.floor((b64.length * at) / 4) * 4;
      const value = `${b64.slice(0, cut)}${tail}${b64.slice(cut)}`;
      const text = `{"k":"${value}","n":1}`;
      for (const size of [65_536, 333_333]) expect(assemble(text, size)).toEqual(JSON.parse(text));
    }
  });

  test("should parse a long base64 object key as JSON.parse does", () => {
    const text = `{"${base64Of(3 * mib)}":1,"v":"${base64Of(2 * mib)}"}`;
    expect(asText(assemble(text, 65_536))).toEqual(JSON.parse(text));
  });

  test("should not take the text's own placeholder-like strings for long values", () => {
    const text = `{"a":"\\u0000gna-long-0","b":"${base64Of(3 * mib)}","c":"\\\\u0000gna-long-1"}`;
    expect(asText(assemble(text, 65_536))).toEqual(JSON.parse(text));
  });

  test("should skip an escaped quote split from its backslash by a chunk boundary", () => {
    const text = `{"a":"x\\"y","b":"${base64Of(mib)}"}`;
    for (const size of [7, 8, 9]) expect(asText(assemble(text, size))).toEqual(JSON.parse(text));
  });

  test.each([
    { name: "ends inside a long value", text: `{"a":"${base64Of(3 * mib)}` },
    { name: "ends inside a short string", text: '{"a":"abc' },
    { name: "has a trailing comma", text: `{"a":"${base64Of(3 * mib)}",}` },
    { name: "is not JSON", text: "<html>" },
  ])("should refuse a text that $name", ({ text }) => {
    expect(() => assemble(text, 65_536)).toThrow(SyntaxError);
  });
});
