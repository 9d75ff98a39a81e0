import { afterEach, describe, expect, test } from "bun:test";
import { nodes } from "../../kube/index.ts";
import type { KubeObject } from "../../kube/index.ts";
import { DuplicateNodeError, enqueueOwnKey, findNode, nodePredicate, nodeSelectors } from "./node-identity.ts";
import { useAdminSim } from "../../../test/harness/admin-kube.ts";

const node = (opts: { host?: string } = {}): KubeObject => ({
  metadata: {
    name: "node-a",
    labels: opts.host === undefined ? {} : { "kubernetes.io/hostname": opts.host },
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

describe("findNode", () => {
  const env = useAdminSim({ bookmarkIntervalMs: 0 });
  let ac: AbortController;
  afterEach(async () => {
    ac.abort();
    for (const n of (await env.kube.list<KubeObject>(nodes, "")).items) await env.kube.delete(nodes, "", n.metadata.name ?? "");
  });
  const register = (name: string, host: string) =>
    env.kube.create<KubeObject>(nodes, "", {
      apiVersion: "v1",
      kind: "Node",
      metadata: { name, labels: { "kubernetes.io/hostname": host } },
    });

  test("should find the Node by the hostname label when its name is unknown", async () => {
    ac = new AbortController();
    await register("node-a", "worker-a");
    await register("node-b", "worker-b");
    expect((await findNode(env.kube, { hostName: "Worker-A", nodeName: undefined }, ac.signal))?.metadata.name).toBe("node-a");
  });

  test("should return undefined when no Node carries the hostname label yet", async () => {
    ac = new AbortController();
    await register("node-b", "worker-b");
    expect(await findNode(env.kube, { hostName: "worker-a", nodeName: undefined }, ac.signal)).toBeUndefined();
  });

  test("should fail naming both Nodes when two carry the hostname label", async () => {
    ac = new AbortController();
    await register("node-a", "worker-a");
    await register("node-a2", "worker-a");
    const err = await findNode(env.kube, { hostName: "worker-a", nodeName: undefined }, ac.signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DuplicateNodeError);
    expect((err as Error).message).toBe("found more than one node with label kubernetes.io/hostname=worker-a: node-a, node-a2");
  });

  test("should get the Node by name once the name is known, whatever its labels", async () => {
    ac = new AbortController();
    await register("node-a", "renamed-host");
    expect((await findNode(env.kube, { hostName: "worker-a", nodeName: "node-a" }, ac.signal))?.metadata.name).toBe("node-a");
  });
});
