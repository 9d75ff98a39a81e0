import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../../kube/index.ts";
import { enqueueOwnKey, nodePredicate, nodeSelectors, restartAnnotationPredicate } from "./watch.ts";

const node = (opts: { host?: string; restart?: string } = {}): KubeObject => ({
  metadata: {
    name: "node-a",
    labels: opts.host === undefined ? {} : { "kubernetes.io/hostname": opts.host },
    ...(opts.restart !== undefined ? { annotations: { "worker.gardener.cloud/restart-systemd-services": opts.restart } } : {}),
  },
});

describe("nodePredicate", () => {
  const p = nodePredicate("worker-a");
  describe("create", () => {
    test("should pass a node labelled with the own hostname", () => expect(p.create(node({ host: "worker-a" }))).toBe(true));
    test("should drop a node of another host", () => expect(p.create(node({ host: "worker-b" }))).toBe(false));
    test("should drop a node without the hostname label", () => expect(p.create(node())).toBe(false));
  });
  describe("update", () => {
    test("should judge the new object", () => {
      expect(p.update(node({ host: "worker-b" }), node({ host: "worker-a" }))).toBe(true);
      expect(p.update(node({ host: "worker-a" }), node({ host: "worker-b" }))).toBe(false);
    });
  });
  describe("delete", () => {
    test("should pass the own node and drop others", () => {
      expect(p.delete(node({ host: "worker-a" }))).toBe(true);
      expect(p.delete(node({ host: "worker-b" }))).toBe(false);
    });
  });
  describe("generic", () => {
    test("should pass the own node and drop others", () => {
      expect(p.generic(node({ host: "worker-a" }))).toBe(true);
      expect(p.generic(node({ host: "worker-b" }))).toBe(false);
    });
  });
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

describe("nodeSelectors", () => {
  test("should select by name when the node name is known", () => {
    expect(nodeSelectors({ hostName: "worker-a", nodeName: "node-a" })).toEqual({ fieldSelector: "metadata.name=node-a" });
  });
  test("should select by the hostname label when the node name is unknown", () => {
    expect(nodeSelectors({ hostName: "worker-a", nodeName: undefined })).toEqual({ labelSelector: "kubernetes.io/hostname=worker-a" });
  });
});

describe("enqueueOwnKey", () => {
  const keys = (fn: (q: { add(k: { namespace: string; name: string }): void }) => void) => {
    const got: string[] = [];
    fn({ add: (k) => got.push(`${k.namespace}/${k.name}`) });
    return got;
  };
  const n: KubeObject = { metadata: { name: "node-a" } };
  test("should enqueue the object's key for create, delete and generic", () => {
    const h = enqueueOwnKey();
    expect(keys((q) => h.create(n, q))).toEqual(["/node-a"]);
    expect(keys((q) => h.delete(n, q))).toEqual(["/node-a"]);
    expect(keys((q) => h.generic(n, q))).toEqual(["/node-a"]);
  });
  test("should enqueue an update once, with the new object's key", () => {
    const h = enqueueOwnKey();
    expect(keys((q) => h.update({ metadata: { name: "old" } }, n, q))).toEqual(["/node-a"]);
  });
});
