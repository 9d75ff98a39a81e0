import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../../kube/index.ts";
import { restartAnnotationPredicate } from "./watch.ts";

const node = (opts: { host?: string; restart?: string } = {}): KubeObject => ({
  metadata: {
    name: "node-a",
    labels: opts.host === undefined ? {} : { "kubernetes.io/hostname": opts.host },
    ...(opts.restart !== undefined ? { annotations: { "worker.gardener.cloud/restart-systemd-services": opts.restart } } : {}),
  },
});

describe("restartAnnotationPredicate", () => {
  const p = restartAnnotationPredicate;
  describe("create", () => {
    test("should pass when the annotation is non-empty", () => expect(p.create(node({ restart: "foo" }))).toBe(true));
    test("should drop when the annotation is empty", () => expect(p.create(node({ restart: "" }))).toBe(false));
    test("should drop when the annotation is absent", () => expect(p.create(node())).toBe(false));
  });
  describe("update", () => {
    test.each([
      ["added", undefined, "foo", true],
      ["changed", "foo", "bar", true],
      ["unchanged", "foo", "foo", false],
      ["removed", "foo", undefined, false],
      ["emptied", "foo", "", false],
      ["absent on both", undefined, undefined, false],
    ] as const)("should return %p → %p when the annotation is %s", (_what, before, after, want) => {
      const a = before === undefined ? node() : node({ restart: before });
      const b = after === undefined ? node() : node({ restart: after });
      expect(p.update(a, b)).toBe(want);
    });
  });
  describe("delete", () => {
    test("should never pass", () => expect(p.delete(node({ restart: "foo" }))).toBe(false));
  });
  describe("generic", () => {
    test("should never pass", () => expect(p.generic(node({ restart: "foo" }))).toBe(false));
  });
});
