import { describe, expect, test } from "bun:test";
import { semanticEqual } from "./equal.ts";

describe("semanticEqual", () => {
  test.each([
    ["an undefined key and a missing one", { a: 1, b: undefined }, { a: 1 }],
    ["a missing key and an undefined one", { a: 1 }, { a: 1, b: undefined }],
    ["an empty list and a missing one", { a: 1, l: [] }, { a: 1 }],
    ["a missing list and an empty one", { a: 1 }, { a: 1, l: [] }],
    [
      "nested objects in another key order",
      { f: { path: "/a", content: { inline: { data: "x", encoding: "" } } } },
      { f: { content: { inline: { encoding: "", data: "x" } }, path: "/a" } },
    ],
    ["null and an empty list", null, []],
  ])("should take %s as equal", (_name, a, b) => {
    expect(semanticEqual(a, b)).toBe(true);
  });

  test.each([
    ["a key only on the left", { a: 1, b: 2 }, { a: 1 }],
    ["a key only on the right", { a: 1 }, { a: 1, b: 2 }],
    ["a non-empty list and a missing one", { l: [1] }, {}],
    ["lists in another order", { l: [1, 2] }, { l: [2, 1] }],
    ["a nested difference", { f: { content: { inline: { data: "x" } } } }, { f: { content: { inline: { data: "y" } } } }],
    ["null and a missing key", { a: null }, {}],
    ["a string and a number", { p: "420" }, { p: 420 }],
  ])("should take %s as different", (_name, a, b) => {
    expect(semanticEqual(a, b)).toBe(false);
    expect(semanticEqual(b, a)).toBe(false);
  });
});
