import { describe, expect, test } from "bun:test";
import { jsonMergePatch, strategicMergePatch } from "./merge-patch.ts";

describe("jsonMergePatch", () => {
  test("should merge maps, delete nulls and replace lists", () => {
    expect(jsonMergePatch({ a: { b: 1, c: 2 }, l: [1, 2] }, { a: { b: null, d: 3 }, l: [3] })).toEqual({ a: { c: 2, d: 3 }, l: [3] });
  });
});

describe("strategicMergePatch", () => {
  test("should merge node conditions by type and keep unmentioned ones", () => {
    const node = {
      status: {
        conditions: [
          { type: "A", status: "False" },
          { type: "B", status: "True" },
        ],
      },
    };
    const out = strategicMergePatch("nodes", node, {
      status: {
        conditions: [
          { type: "A", status: "True" },
          { type: "C", status: "True" },
        ],
      },
    });
    expect(out).toEqual({
      status: {
        conditions: [
          { type: "A", status: "True" },
          { type: "B", status: "True" },
          { type: "C", status: "True" },
        ],
      },
    });
  });

  test("should replace node taints as an atomic list", () => {
    const node = { spec: { taints: [{ key: "a", effect: "NoSchedule" }] } };
    expect(strategicMergePatch("nodes", node, { spec: { taints: [{ key: "b", effect: "NoSchedule" }] } })).toEqual({
      spec: { taints: [{ key: "b", effect: "NoSchedule" }] },
    });
  });

  test("should honour $patch: replace on a map and on a list", () => {
    const o = { metadata: { labels: { a: "1", b: "2" } }, status: { conditions: [{ type: "A" }] } };
    const out = strategicMergePatch("nodes", o, {
      metadata: { labels: { $patch: "replace", c: "3" } },
      status: { conditions: [{ $patch: "replace" }, { type: "Z" }] },
    });
    expect(out).toEqual({ metadata: { labels: { c: "3" } }, status: { conditions: [{ type: "Z" }] } });
  });

  test("should union finalizers and remove via $deleteFromPrimitiveList", () => {
    const o = { metadata: { finalizers: ["a", "b"] } };
    expect(strategicMergePatch("secrets", o, { metadata: { finalizers: ["c", "a"] } })).toEqual({
      metadata: { finalizers: ["a", "b", "c"] },
    });
    expect(strategicMergePatch("secrets", o, { metadata: { "$deleteFromPrimitiveList/finalizers": ["a"] } })).toEqual({
      metadata: { finalizers: ["b"] },
    });
  });

  test("should order merged elements by $setElementOrder", () => {
    const o = { status: { conditions: [{ type: "A" }, { type: "B" }] } };
    const out = strategicMergePatch("nodes", o, {
      status: { "$setElementOrder/conditions": [{ type: "B" }, { type: "A" }], conditions: [{ type: "A", status: "x" }] },
    });
    expect(out).toEqual({ status: { conditions: [{ type: "B" }, { type: "A", status: "x" }] } });
  });
});
