import { describe, expect, test } from "bun:test";
import { isOwnTempName, tempNameFor, tempNamer } from "./temp-names.ts";

describe("tempNameFor", () => {
  test("should make names that isOwnTempName recognises, beside the target's name", () => {
    for (const name of ["kubelet.service", "10-args.conf", "a", "name with spaces", ".hidden"]) {
      const temp = tempNameFor(name);
      expect(temp).toStartWith(`.${name}.tmp-`);
      expect(isOwnTempName(temp)).toBe(true);
    }
    expect(tempNameFor("x")).not.toBe(tempNameFor("x"));
  });
});

describe("tempNamer", () => {
  test.each([1, 3, 4096, 4097, 9000])("should make %p distinct names of tempNameFor's kind, and more past its count", (count) => {
    const name = tempNamer(count);
    const made = Array.from({ length: count + 2 }, (_, i) => name(`f-${i}.conf`));
    made.forEach((temp, i) => {
      expect(temp).toStartWith(`.f-${i}.conf.tmp-`);
      expect(isOwnTempName(temp)).toBe(true);
    });
    expect(new Set(made.map((t) => t.slice(-12))).size).toBe(made.length);
  });
});

describe("isOwnTempName", () => {
  test.each([
    ".x.tmp",
    ".x.tmp-0123456789AB",
    ".x.tmp-0123456789a",
    ".x.tmp-0123456789abc",
    "x.tmp-0123456789ab",
    ".x.tmp-0123456789ab~",
    "..tmp-0123456789ab",
  ])("should not take %p for a temp file of ours", (name) => {
    expect(isOwnTempName(name)).toBe(false);
  });
});
