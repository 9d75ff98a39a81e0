import { describe, expect, test } from "bun:test";
import { and, funcs, not, only, or, type Predicate } from "./predicate.ts";

const yes = funcs<number>({});
const no: Predicate<number> = { create: () => false, update: () => false, delete: () => false, generic: () => false };
const even = funcs<number>({ create: (n) => n % 2 === 0, update: (_a, b) => b % 2 === 0 });

const all = (p: Predicate<number>, n: number) => [p.create(n), p.update(n - 1, n), p.delete(n), p.generic(n)];

describe("predicate", () => {
  describe("funcs", () => {
    test("should let events through for members left out", () => {
      expect(all(even, 3)).toEqual([false, false, true, true]);
      expect(all(even, 4)).toEqual([true, true, true, true]);
    });
  });

  describe("and", () => {
    test("should pass only what every predicate passes", () => {
      expect(all(and(yes, even), 3)).toEqual([false, false, true, true]);
      expect(all(and(yes, no), 4)).toEqual([false, false, false, false]);
    });
    test("should pass everything when empty", () => {
      expect(all(and<number>(), 1)).toEqual([true, true, true, true]);
    });
  });

  describe("or", () => {
    test("should pass what any predicate passes", () => {
      expect(all(or(no, even), 3)).toEqual([false, false, true, true]);
      expect(all(or(no, not(even)), 3)).toEqual([true, true, false, false]);
    });
    test("should pass nothing when empty", () => {
      expect(all(or<number>(), 1)).toEqual([false, false, false, false]);
    });
  });

  describe("not", () => {
    test("should invert every event kind", () => {
      expect(all(not(even), 3)).toEqual([true, true, false, false]);
    });
  });

  describe("only", () => {
    test("should pass just the named event kinds", () => {
      expect(all(only<number>("create"), 1)).toEqual([true, false, false, false]);
      expect(all(only<number>("generic", "delete"), 1)).toEqual([false, false, true, true]);
    });
  });
});
