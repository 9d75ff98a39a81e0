import { describe, expect, test } from "bun:test";
import { parseJsonSharingLongStrings } from "./big-json.ts";

const long = (c: string) => c.repeat(1024 * 1024 + 3);

describe("parseJsonSharingLongStrings", () => {
  test("gives what JSON.parse gives for long values, keys, escapes and nesting", () => {
    const value = {
      type: "MODIFIED",
      object: {
        metadata: { name: "osc", annotations: { a: 'quote " and \\ backslash' } },
        data: { "osc.yaml": long("QUJD"), small: "eA==" },
      },
      list: [long("x"), 1, null, true, { deep: [long("y")] }],
    };
    for (const text of [JSON.stringify(value), JSON.stringify(value, null, 2)]) {
      expect(parseJsonSharingLongStrings(text)).toEqual(JSON.parse(text));
    }
  });

  test("a long key, a long value with escapes or control characters: still exactly JSON.parse's result", () => {
    const key = long("k");
    const escaped = `${long("a")}\n"\\\u00e9`;
    const text = JSON.stringify({ [key]: escaped, other: long("b") });
    expect(parseJsonSharingLongStrings(text)).toEqual(JSON.parse(text));
    const spaced = `{"${key}" \n : "v", "x": "${long("c")}"}`;
    expect(parseJsonSharingLongStrings(spaced)).toEqual(JSON.parse(spaced));
  });

  test("a value that looks like the placeholder is not replaced", () => {
    const text = JSON.stringify({ a: "\u00000", b: long("z") });
    expect(parseJsonSharingLongStrings(text)).toEqual({ a: "\u00000", b: long("z") });
  });

  test("refuses what JSON.parse refuses: unpaired quotes, a raw control character in a long value, trailing text", () => {
    for (const text of [`{"a": "${long("q")}}`, `{"a": "${long("q")}\u0001"}`, `{"a": "${long("q")}"} x`, `["${long("q")}",]`]) {
      expect(() => JSON.parse(text)).toThrow(SyntaxError);
      expect(() => parseJsonSharingLongStrings(text)).toThrow(SyntaxError);
    }
  });
});
