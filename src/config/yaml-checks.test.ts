import { describe, expect, test } from "bun:test";
import { unsafeStructure, unsafeTree } from "./yaml-checks.ts";

/** A chain of `depth` nested nodes, alternating lists and mappings, ending in `leaf`. */
function chain(depth: number, leaf: unknown = 1): unknown {
  let node: unknown = leaf;
  for (let i = 0; i < depth; i++) node = i % 2 === 0 ? [node] : { k: node, other: "x" };
  return node;
}

/** A small random tree of mappings, lists and Maps (deterministic). */
function randomTree(seed: number): unknown {
  let s = seed;
  const rnd = () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s / 0x7fffffff;
  };
  const make = (depth: number): unknown => {
    const r = rnd();
    if (depth > 6 || r < 0.3) return r < 0.1 ? null : "v";
    const n = Math.floor(rnd() * 4);
    const kids = Array.from({ length: n }, () => make(depth + 1));
    if (r < 0.6) return kids;
    if (r < 0.9) return Object.fromEntries(kids.map((k, i) => [`k${i}`, k]));
    return new Map(kids.map((k, i) => [i, k]));
  };
  return make(0);
}

describe("unsafeTree", () => {
  test("should give unsafeStructure's answer for documents without aliases", () => {
    const wide = Array.from({ length: 1000 }, () => ({}));
    const docs: unknown[] = [
      null,
      "text",
      {},
      [],
      chain(199),
      chain(200),
      chain(201),
      chain(1000),
      { a: chain(150), b: [chain(300)] },
      // Shared (not recursive) nodes count once per place, as expanded aliases do: over 2,000,000 nodes.
      Array.from({ length: 2001 }, () => wide),
      [chain(300), Array.from({ length: 2001 }, () => wide)],
      ...Array.from({ length: 200 }, (_, i) => randomTree(i + 1)),
    ];
    for (const doc of docs) expect(unsafeTree(doc)).toBe(unsafeStructure(doc));
    expect(unsafeTree(chain(201))).toBe("nesting deeper than 200 levels");
    expect(unsafeTree(Array.from({ length: 2001 }, () => wide))).toBe("more than 2000000 nodes once aliases are expanded");
    expect(unsafeTree(chain(200))).toBeUndefined();
  });
});
