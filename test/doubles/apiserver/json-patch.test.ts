import { describe, expect, test } from "bun:test";
import { applyJsonPatch } from "./json-patch.ts";
import { SimApiError } from "./status.ts";

describe("applyJsonPatch", () => {
  test("should apply add, remove, replace, move, copy and test in order", () => {
    const out = applyJsonPatch({ a: 1, l: [1, 2], o: { "x/y": 1 } }, [
      { op: "test", path: "/a", value: 1 },
      { op: "add", path: "/l/-", value: 3 },
      { op: "add", path: "/l/0", value: 0 },
      { op: "remove", path: "/o/x~1y" },
      { op: "replace", path: "/a", value: 2 },
      { op: "copy", from: "/a", path: "/b" },
      { op: "move", from: "/b", path: "/c" },
    ]);
    expect(out).toEqual({ a: 2, l: [0, 1, 2, 3], o: {}, c: 2 });
  });

  test.each([
    [[{ op: "test", path: "/a", value: 2 }], 422],
    [[{ op: "remove", path: "/nope" }], 422],
    [[{ op: "replace", path: "/x/y", value: 1 }], 422],
    [[{ op: "add", path: "/l/9", value: 1 }], 422],
    [[{ op: "frobnicate", path: "/a" }], 422],
    [[{ path: "/a" }], 422],
    [{ op: "add" }, 400],
    [[{ op: 5, path: "/a" }], 400],
    [[{ op: "add", path: ["a"], value: 1 }], 400],
  ])("should reject %j with %p", (patch, code) => {
    expect(rejection({ a: 1, l: [] }, patch).code).toBe(code);
  });

  test("should answer a patch that does not apply with the real 422 body, keeping the reason only as cause", () => {
    const err = rejection({ a: 1 }, [{ op: "test", path: "/a", value: 2 }]);
    expect(err.toStatus()).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: "the server rejected our request due to an error in our request",
      reason: "Invalid",
      details: {},
      code: 422,
    });
    expect(err.cause).toBe("testing value /a failed: test failed");
  });
});

function rejection(doc: unknown, patch: unknown): SimApiError {
  try {
    applyJsonPatch(doc, patch);
  } catch (err) {
    if (err instanceof SimApiError) return err;
    throw err;
  }
  throw new Error("patch was accepted");
}
