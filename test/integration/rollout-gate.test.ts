// The slot step of a chunked rollout (issue 16) inside the OSC reconcile, in-process against the
// API-server simulator: which other nodes' slots a writer may drop (issue 25) and what a node that
// cannot list its pool says.
import { describe, expect, test } from "bun:test";
import type { Plain } from "../fixtures/osc/acceptance-osc.ts";
import type { OscWorld } from "../fixtures/osc/harness.ts";
import { useOscWorlds } from "../harness/osc-worlds.ts";
import { defaultRolloutTimings, firstLookPauseMs, SlotPoll } from "../../src/controllers/operatingsystemconfig/features/rollout/index.ts";
import { realClock } from "../../src/clock/index.ts";
import type { Resource } from "../../src/kube/resources.ts";
import type { KubeObject, WriteOptions } from "../../src/kube/types.ts";
import { FakeClock } from "../doubles/fake-clock.ts";

const env = useOscWorlds();
/** One agent's rollout state across the reconciles of a world (each reconcile builds a fresh reconciler). */
const agent = () => ({ rollout: { timings: defaultRolloutTimings } });
const slotPrefix = "slot.node-agent.gardener.cloud/";

const smallOsc: Plain = {
  apiVersion: "extensions.gardener.cloud/v1alpha1",
  kind: "OperatingSystemConfig",
  spec: {
    files: [{ path: "/etc/demo/hello", permissions: 0o644, content: { inline: { data: "hello" } } }],
    units: [{ name: "demo.service", content: "[Service]\nExecStart=/bin/true\n", filePaths: ["/etc/demo/hello"] }],
  },
};

/**
 * This world's Node with rollout-parallelism N, the OSC, and the pool's Lease holding `slots` (node →
 * state) of its checksum, last renewed 10 minutes ago (stale: only stale slots are asked about).
 */
function pool(w: OscWorld, n: number, slots: Record<string, string>): string {
  const checksum = w.setOsc(smallOsc);
  env.sim.store.patch("nodes", "", w.nodeName, "merge", {
    metadata: { annotations: { "node-agent.gardener.cloud/rollout-parallelism": String(n) } },
  });
  const at = new Date(Date.now() - 600_000).toISOString();
  const annotations = Object.fromEntries(
    Object.entries(slots).map(([node, state]) => [`${slotPrefix}${node}`, JSON.stringify({ checksum, since: at, renewed: at, state })]),
  );
  env.sim.store.create("leases", {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: { name: w.secretName, namespace: "kube-system", annotations },
    spec: {},
  });
  return checksum;
}

/** A Node that joined without the pool label (no agent of it runs here). */
const unlabelledNode = (name: string) => env.sim.store.create("nodes", { apiVersion: "v1", kind: "Node", metadata: { name } });

const slotStates = (w: OscWorld): Record<string, string> => {
  const lease = env.sim.store.get("leases", "kube-system", w.secretName) as Plain;
  return Object.fromEntries(
    Object.entries((lease["metadata"].annotations ?? {}) as Record<string, string>)
      .filter(([k]) => k.startsWith(slotPrefix))
      .map(([k, v]) => [k.slice(slotPrefix.length), JSON.parse(v).state]),
  );
};
const applied = (w: OscWorld): Plain | undefined =>
  (w.node()["status"]?.conditions as Plain[] | undefined)?.find((c) => c["type"] === "OperatingSystemConfigApplied");
const nodeChecksum = (w: OscWorld) => w.node()["metadata"]?.annotations?.["checksum/cloud-config-data"];

describe("rollout slots of other nodes (issue 25)", () => {
  test("keeps the slot of a Node missing from the pool list, drops a deleted Node's, and counts the kept one", async () => {
    const w = await env.world();
    const a = agent();
    const peer = `${w.nodeName}-peer`;
    const deleted = `${w.nodeName}-deleted`;
    unlabelledNode(peer);
    // Both stale, so both count as failed: with N = 2 they would halt the rollout if both stayed.
    pool(w, 2, { [peer]: "applying", [deleted]: "failed" });

    await w.reconcile(a);
    // The first look at a checksum pauses at random before taking a free slot; a waiting node writes no entry (issue 25).
    expect(slotStates(w)).toEqual({ [peer]: "applying" });
    expect(applied(w)?.["message"]).toContain("one is free, trying it after a random pause");
    await w.reconcile(a);
    // The peer's slot fills one of the two: this node took the other.
    expect(slotStates(w)).toEqual({ [peer]: "applying", [w.nodeName]: "verifying" });
    expect(await w.text("/etc/demo/hello")).toBe("hello");

    const v = await env.world();
    const b = agent();
    const again = pool(v, 1, { [peer]: "applying", [`${v.nodeName}-deleted`]: "failed" });
    await v.reconcile(b);
    await v.reconcile(b);
    // N = 1: the kept stale slot alone halts the rollout.
    expect(slotStates(v)).toEqual({ [peer]: "applying" });
    expect(applied(v)).toMatchObject({ status: "False", reason: "RolloutHalted" });
    expect(applied(v)?.["message"]).toContain(`failed on (or stopped renewing the slot of) ${peer}, filling all 1 slots`);
    expect(nodeChecksum(v)).not.toBe(again);
  });

  test("a first look after the Secret update's pause takes a free slot at once (issue 25)", async () => {
    const w = await env.world();
    const a = agent();
    const checksum = pool(w, 2, {});
    // The pause the Secret handler served before this reconcile: random, below min(10 s, renewEvery, N × 0.5 s).
    const pauses = Array.from({ length: 50 }, () => firstLookPauseMs(a.rollout, checksum, 2, Date.now()));
    expect(Math.max(...pauses)).toBeLessThan(1_000);
    expect(Math.min(...pauses)).toBeGreaterThanOrEqual(0);
    expect(new Set(pauses).size).toBeGreaterThan(1);

    await w.reconcile(a);
    expect(slotStates(w)).toEqual({ [w.nodeName]: "verifying" });
    expect(await w.text("/etc/demo/hello")).toBe("hello");

    // A pause served for another version does not count for this one: its first look pauses in the gate.
    const v = await env.world();
    const b = agent();
    pool(v, 2, {});
    firstLookPauseMs(b.rollout, "an-older-checksum", 2, Date.now());
    await v.reconcile(b);
    expect(slotStates(v)).toEqual({});
    expect(applied(v)?.["message"]).toContain("one is free, trying it after a random pause");
  });

  test("asks nothing about a renewed slot of a Node it does not list", async () => {
    const w = await env.world();
    const a = agent();
    pool(w, 1, {});
    const at = new Date().toISOString();
    const slot = JSON.stringify({ checksum: w.checksum, since: at, renewed: at, state: "applying" });
    env.sim.store.patch("leases", "kube-system", w.secretName, "merge", {
      metadata: { annotations: { [`${slotPrefix}${w.nodeName}-gone`]: slot } },
    });
    const start = env.sim.requests.length;
    await w.reconcile(a);
    await w.reconcile(a);
    expect(env.sim.requests.slice(start).filter((r) => r.resource === "nodes" && r.verb === "list")).toEqual([]);
    // Live until stale (its node may be alive): this node waits behind it.
    expect(slotStates(w)).toEqual({ [`${w.nodeName}-gone`]: "applying" });
    expect(applied(w)?.["message"]).toContain(`behind ${w.nodeName}-gone`);
    expect(await w.exists("/etc/demo/hello")).toBe(false);
    expect(nodeChecksum(w)).toBeUndefined();
  });

  test("a node that cannot list its pool waits, says why, and writes nothing; it takes the free slot once it can", async () => {
    const w = await env.world();
    const a = agent();
    const peer = `${w.nodeName}-peer`;
    unlabelledNode(peer);
    pool(w, 2, { [peer]: "applying" });

    env.sim.faults.failNext(1, { verb: "list", resource: "nodes", status: 503 });
    await w.reconcile(a);
    expect(slotStates(w)).toEqual({ [peer]: "applying" });
    expect(applied(w)).toMatchObject({ status: "False", reason: "WaitingForRolloutSlot" });
    expect(applied(w)?.["message"]).toContain(
      `Not taking a rollout slot: cannot list the Nodes labelled worker.gardener.cloud/gardener-node-agent-secret-name=${w.secretName}`,
    );
    expect(await w.exists("/etc/demo/hello")).toBe(false);

    await w.reconcile(a);
    await w.reconcile(a);
    expect(slotStates(w)).toEqual({ [peer]: "applying", [w.nodeName]: "verifying" });
  });
});

describe("a take that loses every race for the pool's Lease (issue 25)", () => {
  test("waits with a Node condition that says so, not a failed reconcile, and takes on a later look", async () => {
    const w = await env.world();
    const waits: number[] = [];
    const a = { rollout: { ...agent().rollout, metrics: { slotState: () => {}, waitSeconds: (s: number) => waits.push(s) } } };
    const checksum = pool(w, 2, {});
    // The Secret update's pause is over (it began 30 s ago): this look takes.
    firstLookPauseMs(a.rollout, checksum, 2, Date.now() - 30_000);
    // Another node writes the Lease between each of this node's reads and its write: the simulator answers 409.
    let others = 0;
    const racing = new Proxy(w.kube, {
      get(target, prop) {
        if (prop === "update")
          return (res: Resource, ns: string, obj: KubeObject, opts?: WriteOptions) => {
            if (res.resource === "leases")
              env.sim.store.patch("leases", "kube-system", w.secretName, "merge", {
                metadata: { annotations: { "example.com/other-writer": String(++others) } },
              });
            return target.update(res, ns, obj, opts);
          };
        const v = Reflect.get(target, prop);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    // Pauses between attempts pass at once (injected time); the real clock still dates the slots.
    const clock = { now: () => realClock.now(), sleep: async () => {} };
    const result = await w.reconcile({ ...a, kube: racing, clock });

    expect(others).toBe(8);
    expect(result.requeueAfterMs ?? Number.POSITIVE_INFINITY).toBeLessThan(1_000); // N × 0.5 s at most
    expect(slotStates(w)).toEqual({});
    expect(applied(w)).toMatchObject({ status: "False", reason: "WaitingForRolloutSlot" });
    expect(applied(w)?.["message"]).toContain(
      `Not in a rollout slot yet: lease kube-system/${w.secretName} kept changing under 8 attempts (other nodes wrote it meanwhile)`,
    );
    expect(await w.exists("/etc/demo/hello")).toBe(false);
    // The wait gauge goes on counting from the Secret update while the Lease is busy.
    expect(waits.at(-1)).toBeGreaterThanOrEqual(30);

    await w.reconcile(a);
    expect(slotStates(w)).toEqual({ [w.nodeName]: "verifying" });
    expect(waits.at(-1)).toBe(0);
    expect(await w.text("/etc/demo/hello")).toBe("hello");
  });
});

describe("a waiting node whose wanted version goes back to the applied one (issue 25)", () => {
  test("stops polling the pool's Lease", async () => {
    const w = await env.world();
    const clock = new FakeClock(Date.now());
    const lifetime = new AbortController();
    let woken = 0;
    const slotPoll = new SlotPoll({ kube: w.kube, clock, timings: defaultRolloutTimings, wake: () => woken++, signal: lifetime.signal });
    const a = { clock, rollout: { timings: defaultRolloutTimings, slotPoll } };
    try {
      // v0 applied before the pool rolls out in chunks.
      const v0 = w.setOsc(smallOsc);
      await w.reconcile({ clock });
      expect(nodeChecksum(w)).toBe(v0);

      // v1, N = 1, the slot held by a peer: this node waits behind it and polls the Lease.
      pool(w, 1, {});
      const at = new Date(clock.now()).toISOString();
      env.sim.store.patch("leases", "kube-system", w.secretName, "merge", {
        metadata: {
          annotations: { [`${slotPrefix}peer`]: JSON.stringify({ checksum: "v-other", since: at, renewed: at, state: "applying" }) },
        },
      });
      w.setOsc({ ...smallOsc, spec: { ...smallOsc["spec"], files: [] } });
      await w.reconcile(a);
      expect(applied(w)?.["message"]).toContain("behind peer");
      await clock.waitForSleepers(1);

      // Back to v0: nothing to roll out; the poll's pause ends without a GET and no next pause follows.
      expect(w.setOsc(smallOsc)).toBe(v0);
      await w.reconcile(a);
      const leaseGets = () => env.sim.requests.filter((r) => r.resource === "leases" && r.verb === "get").length;
      const before = leaseGets();
      const sleepers = clock.pending(); // the poll's pause and the heap shrink after v0's apply (10 s)
      clock.step(6_000); // beyond the longest poll pause (1.5 × 4 s)
      for (let i = 0; i < 100; i++) await new Promise<void>((r) => setImmediate(r));
      expect(leaseGets()).toBe(before);
      expect(clock.pending()).toBe(sleepers - 1);
      expect(woken).toBe(0);
    } finally {
      lifetime.abort();
    }
  });
});
