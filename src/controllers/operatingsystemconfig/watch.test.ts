import { describe, expect, test } from "bun:test";
import { ApiError } from "../../kube/index.ts";
import type { Kube, KubeObject, ObjectKey } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import { nodeHandler, ReconciliationDelay, secretHandler, secretPredicate } from "./watch.ts";

const log: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => log };

const secret = (osc: string, annotations: Record<string, string> = {}, labels: Record<string, string> = {}): KubeObject => ({
  metadata: { namespace: "kube-system", name: "osc-secret", annotations, labels },
  data: { "osc.yaml": btoa(osc) },
});

/** A Kube whose Node GET answers from a mutable slot (or throws). */
function nodeKube() {
  const state: { node: KubeObject | Error } = { node: { metadata: { name: "n" } } };
  const kube = {
    async get() {
      if (state.node instanceof Error) throw state.node;
      return state.node;
    },
  } as unknown as Kube;
  return { kube, state };
}
const withDelay = (v: string | undefined): KubeObject => ({
  metadata: { name: "n", ...(v !== undefined ? { annotations: { "node-agent.gardener.cloud/reconciliation-delay": v } } : {}) },
});

describe("secretPredicate", () => {
  describe("create", () => {
    test("should pass every create event", () => {
      expect(secretPredicate.create(secret("a"))).toBe(true);
    });
  });
  describe("update", () => {
    test("should drop an update with identical osc.yaml", () => {
      expect(secretPredicate.update(secret("a"), secret("a", { x: "y" }, { l: "v" }))).toBe(false);
    });
    test("should pass an update with new osc.yaml", () => {
      expect(secretPredicate.update(secret("a"), secret("b"))).toBe(true);
    });
  });
  describe("delete", () => {
    test("should pass delete events (the missing Secret is reported)", () => {
      expect(secretPredicate.delete(secret("a"))).toBe(true);
    });
  });
  describe("generic", () => {
    test("should drop generic events", () => {
      expect(secretPredicate.generic(secret("a"))).toBe(false);
    });
  });
});

describe("ReconciliationDelay", () => {
  const signal = new AbortController().signal;

  test("should be 0 while the node name is unknown", async () => {
    const { kube } = nodeKube();
    expect(await new ReconciliationDelay(kube, { hostName: "h", nodeName: undefined }, log).get(signal)).toBe(0);
  });

  test("should follow the annotation and fall back to the last known value", async () => {
    const { kube, state } = nodeKube();
    const d = new ReconciliationDelay(kube, { hostName: "h", nodeName: "n" }, log);
    state.node = withDelay(undefined);
    expect(await d.get(signal)).toBe(0);
    state.node = withDelay("8m");
    expect(await d.get(signal)).toBe(480_000);
    state.node = withDelay(undefined);
    expect(await d.get(signal)).toBe(480_000);
    state.node = withDelay("13s");
    expect(await d.get(signal)).toBe(13_000);
    state.node = withDelay("not-a-duration");
    expect(await d.get(signal)).toBe(13_000);
    state.node = new ApiError(403, "Forbidden", "forbidden");
    expect(await d.get(signal)).toBe(13_000);
    state.node = withDelay("12h");
    expect(await d.get(signal)).toBe(12 * 3600_000);
    state.node = withDelay("2m18.461538461s");
    expect(await d.get(signal)).toBeCloseTo(138_461.538461, 3);
  });

  test("should be 0 for a node in a chunked rollout (rollout-parallelism set), whatever the annotation says", async () => {
    const { kube, state } = nodeKube();
    const d = new ReconciliationDelay(kube, { hostName: "h", nodeName: "n" }, log);
    state.node = withDelay("8m");
    expect(await d.get(signal)).toBe(480_000);
    state.node = {
      metadata: {
        name: "n",
        annotations: { "node-agent.gardener.cloud/reconciliation-delay": "8m", "node-agent.gardener.cloud/rollout-parallelism": "2" },
      },
    };
    expect(await d.get(signal)).toBe(0);
  });

  test("should be the rollout's first-look pause for a new version in a chunked rollout (issue 25)", async () => {
    const { kube, state } = nodeKube();
    const asked: [number, string | undefined][] = [];
    const pause = (n: number, s: KubeObject) => {
      asked.push([n, s.metadata.name]);
      return 1_234;
    };
    const d = new ReconciliationDelay(kube, { hostName: "h", nodeName: "n" }, log, pause);
    state.node = {
      metadata: {
        name: "n",
        annotations: { "node-agent.gardener.cloud/reconciliation-delay": "8m", "node-agent.gardener.cloud/rollout-parallelism": "3" },
      },
    };
    expect(await d.get(signal, secret("a"))).toBe(1_234);
    expect(asked).toEqual([[3, "osc-secret"]]);
    // Without the new version (a caller that has none) there is no pause to serve.
    expect(await d.get(signal)).toBe(0);
    // Not in a chunked rollout: the annotation's delay, no rollout pause.
    state.node = withDelay("13s");
    expect(await d.get(signal, secret("b"))).toBe(13_000);
    expect(asked).toHaveLength(1);
  });
});

describe("secretHandler", () => {
  function setup(delay: string | undefined, nodeName: string | null = "n") {
    const { kube, state } = nodeKube();
    state.node = withDelay(delay);
    const added: ObjectKey[] = [];
    const delayed: [ObjectKey, number][] = [];
    let resolveDelayed: () => void = () => {};
    const delayedSeen = new Promise<void>((r) => (resolveDelayed = r));
    const h = secretHandler({
      delay: new ReconciliationDelay(kube, { hostName: "h", nodeName: nodeName ?? undefined }, log),
      addAfter: (k, ms) => {
        delayed.push([k, ms]);
        resolveDelayed();
      },
      log,
      signal: new AbortController().signal,
    });
    const q = {
      add: (k: ObjectKey) => {
        added.push(k);
        resolveDelayed();
      },
    };
    return { h, q, added, delayed, delayedSeen };
  }
  const key = { namespace: "kube-system", name: "osc-secret" };

  test("should enqueue a create at once", () => {
    const { h, q, added } = setup("5m");
    h.create(secret("a"), q);
    expect(added).toEqual([key]);
  });

  test("should enqueue an update of a serial secret at once", () => {
    const { h, q, added, delayed } = setup("5m");
    h.update(secret("a"), secret("b", { "reconciliation.osc.node-agent.gardener.cloud/serial": "true" }), q);
    expect(added).toEqual([key]);
    expect(delayed).toEqual([]);
  });

  test("should enqueue an update after the node's delay", async () => {
    const { h, q, added, delayed, delayedSeen } = setup("12h");
    h.update(secret("a"), secret("b"), q);
    await delayedSeen;
    expect(delayed).toEqual([[key, 12 * 3600_000]]);
    expect(added).toEqual([]);
  });

  test("should enqueue an update at once while the node is unknown", async () => {
    const { h, q, added, delayedSeen } = setup("12h", null);
    h.update(secret("a"), secret("b"), q);
    await delayedSeen;
    expect(added).toEqual([key]);
  });

  test("should enqueue a delete at once and ignore generic events", () => {
    const { h, q, added, delayed } = setup("0s");
    h.delete(secret("a"), q);
    h.generic(secret("a"), q);
    expect(added).toEqual([key]);
    expect(delayed).toEqual([]);
  });
});

describe("nodeHandler", () => {
  test("should map every Node event to the OSC Secret's key", () => {
    const secretKey = { namespace: "kube-system", name: "osc-secret" };
    const added: ObjectKey[] = [];
    const q = { add: (k: ObjectKey) => void added.push(k) };
    const h = nodeHandler(secretKey);
    const node: KubeObject = { metadata: { name: "n", annotations: { "node-agent.gardener.cloud/hold": "x" } } };
    h.create(node, q);
    h.update(node, node, q);
    h.delete(node, q);
    h.generic(node, q);
    expect(added).toEqual([secretKey, secretKey, secretKey, secretKey]);
  });
});
