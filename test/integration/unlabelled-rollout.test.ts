// Issue 25, found by acceptance testing against a real kube-apiserver: four agents with
// rollout-parallelism 2 whose Nodes lack the pool label worker.gardener.cloud/gardener-node-agent-secret-name
// listed an empty pool, removed each other's slots as "Nodes that no longer exist" and never rolled out.
// Here four compiled agents on unlabelled Nodes against one API-server simulator, with cluster-admin
// credentials as in that set-up (Gardener's node-agent authorizer would not let an unlabelled Node touch
// the pool's Lease at all), and the chunked-rollout timings shortened through the environment. The unit
// check keeps its configured period (1 min): the check the OSC controller asks for right after an apply is
// the one a verifying node waits for (issue 25), so no wave waits for a period.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { StoreEvent } from "../doubles/apiserver/store.ts";
import { eventually } from "../harness/eventually.ts";
import { demoOsc as osc, type Pool, startPool } from "../harness/pool.ts";

const nodes = ["u-1", "u-2", "u-3", "u-4"];
const env = {
  GARDENER_NODE_AGENT_TIMINGS: "healthyFor=1s,verifyTimeout=60s,renewEvery=1s,staleAfter=5s,verifyPoll=250ms",
};
const slotPrefix = "slot.node-agent.gardener.cloud/";

type Slots = Map<string, { checksum: string; state: string }>;
const slotsOf = (o: unknown): Slots => {
  const ann = (o as { metadata?: { annotations?: Record<string, string> } } | undefined)?.metadata?.annotations ?? {};
  return new Map(
    Object.entries(ann)
      .filter(([k]) => k.startsWith(slotPrefix))
      .map(([k, v]) => [k.slice(slotPrefix.length), JSON.parse(v) as { checksum: string; state: string }]),
  );
};

/** Every change of the pool's Lease, seen synchronously: the most active slots at once, and every removed entry. */
class LeaseRecorder {
  maxActive = 0;
  readonly removed: { node: string; state: string }[] = [];
  readonly #stop: () => void;

  constructor(pool: Pool) {
    this.#stop = pool.sim.store.subscribe((e: StoreEvent) => {
      if (e.def.resource !== "leases") return;
      const now = slotsOf(e.object);
      const active = [...now].filter(([, s]) => s.state === "applying" || s.state === "verifying");
      this.maxActive = Math.max(this.maxActive, active.length);
      for (const [n, s] of slotsOf(e.prev)) if (!now.has(n)) this.removed.push({ node: n, state: s.state });
    });
  }

  stop(): void {
    this.#stop();
  }
}

const leaseSlots = (p: Pool): Slots => slotsOf(p.sim.store.get("leases", "kube-system", p.secretName));

let pool: Pool;
beforeAll(async () => {
  pool = await startPool({
    nodes,
    poolLabel: false,
    credentials: "cluster-admin",
    nodeAnnotations: { "node-agent.gardener.cloud/rollout-parallelism": "2" },
    extraConfig: {
      controllers: { operatingSystemConfig: { secretName: "gardener-node-agent-pool", kubernetesVersion: "1.33.0" } },
    },
  });
});
afterAll(async () => {
  await pool.stop();
});

describe("chunked rollout on Nodes without the pool label (issue 25)", () => {
  test("every Node gets the new checksum, never more than two in a slot at once, and no one's entry is dropped", async () => {
    const labels = (n: string) => (pool.sim.store.get("nodes", "", n) as { metadata: { labels?: Record<string, string> } }).metadata.labels;
    for (const n of nodes) expect(Object.keys(labels(n) ?? {})).toEqual(["kubernetes.io/hostname"]);
    const checksum = pool.setOsc(osc("v1"));
    const rec = new LeaseRecorder(pool);
    for (const m of pool.members) m.spawn(env);
    await eventually("all four nodes applied v1", () => pool.members.every((m) => m.appliedChecksum() === checksum), {
      timeoutMs: 90_000,
      intervalMs: 50,
    });
    rec.stop();
    expect(rec.maxActive).toBe(2);
    // Entries leave the Lease only as their own node's release after verifying, once per node.
    expect(rec.removed.map((r) => r.state)).toEqual(["verifying", "verifying", "verifying", "verifying"]);
    expect(rec.removed.map((r) => r.node).sort()).toEqual(nodes);
    expect([...leaseSlots(pool).keys()]).toEqual([]);
  }, 120_000);
});
