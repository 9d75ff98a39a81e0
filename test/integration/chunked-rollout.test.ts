// Chunked, health-gated rollouts (issue 16) with six compiled agents against one API-server simulator,
// N = 2 (Node annotation node-agent.gardener.cloud/rollout-parallelism), timings shortened through
// GARDENER_NODE_AGENT_TIMINGS (the unit check judges a changed node every second instead of every 15 s
// or more, so a verifying node's health window starts within a second of its change): never more than
// two nodes between their first host write and their slot release; a change whose restarted unit fails
// halts after two nodes; a fixed OSC reaches all six; a node killed while holding a slot counts as
// failed once stale and resumes when it returns.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { StoreEvent } from "../doubles/apiserver/store.ts";
import { eventually } from "../harness/eventually.ts";
import { demoOsc, startPool, type Pool, type PoolMember } from "../harness/pool.ts";

const nodes = ["r-1", "r-2", "r-3", "r-4", "r-5", "r-6"];
const env = {
  GARDENER_NODE_AGENT_TIMINGS: "healthyFor=2s,verifyTimeout=90s,renewEvery=1s,staleAfter=6s,verifyPoll=500ms,unitCheckPeriod=1s",
};
const slotPrefix = "slot.node-agent.gardener.cloud/";

const brokenUnit = `  - name: broken.service
    content: "[Service]\\nExecStart=/bin/false\\n"`;

interface Interval {
  node: string;
  start: number;
  end: number;
}

/** Units of the test's OSCs: systemd calls for them (and daemon-reloads after unit-file writes) are host writes of a rollout. */
const rolloutUnits = ["demo.service", "broken.service"];
const isRolloutWrite = (a: { action: string; units: readonly string[] }) =>
  a.action === "DaemonReload" || (a.action !== "ListByNames" && a.units.some((u) => rolloutUnits.includes(u)));

/**
 * Watches host roots, systemd calls and the Lease. Per node, a change interval runs from a host write
 * (the version file seen, or a systemd call for the OSC's units) to the next release of an
 * applying/verifying slot of any checksum (an agent that has not seen the new Secret yet changes its node
 * under the old checksum's slot). Other units' calls (the kubelet health check restarting kubelet) are
 * not a rollout's writes.
 */
class RolloutRecorder {
  /** First release of a slot of `checksum`, per node. */
  readonly releases = new Map<string, number>();
  /** First time the version file read `version`, per node. */
  readonly firstWrite = new Map<string, number>();
  maxActiveInLease = 0;
  readonly #allReleases = new Map<string, number[]>();
  #stopStore: () => void;
  #polling = true;
  readonly #done: Promise<void>;
  readonly startedAt = Date.now();

  constructor(
    private readonly pool: Pool,
    private readonly version: string,
    private readonly checksum: string,
  ) {
    this.#stopStore = pool.sim.store.subscribe((e: StoreEvent) => this.#onEvent(e));
    this.#done = this.#poll();
  }

  #onEvent(e: StoreEvent): void {
    if (e.def.resource !== "leases") return;
    const ann = (o: unknown) => (o as { metadata?: { annotations?: Record<string, string> } } | undefined)?.metadata?.annotations ?? {};
    const active = (a: Record<string, string>, checksum?: string) =>
      new Set(
        Object.entries(a)
          .filter(
            ([k, v]) =>
              k.startsWith(slotPrefix) && (checksum === undefined || v.includes(checksum)) && /"state":"(applying|verifying)"/.test(v),
          )
          .map(([k]) => k.slice(slotPrefix.length)),
      );
    const now = active(ann(e.object), this.checksum);
    this.maxActiveInLease = Math.max(this.maxActiveInLease, now.size);
    for (const n of active(ann(e.prev), this.checksum)) if (!now.has(n) && !this.releases.has(n)) this.releases.set(n, Date.now());
    const nowAny = active(ann(e.object));
    for (const n of active(ann(e.prev))) if (!nowAny.has(n)) this.#allReleases.set(n, [...(this.#allReleases.get(n) ?? []), Date.now()]);
  }

  async #poll(): Promise<void> {
    while (this.#polling) {
      for (const m of this.pool.members) {
        if (!this.firstWrite.has(m.nodeName) && (await m.readHostFile("/etc/demo/version")) === `${this.version}\n`)
          this.firstWrite.set(m.nodeName, Date.now());
      }
      await Bun.sleep(20);
    }
  }

  intervals(): Interval[] {
    const out: Interval[] = [];
    for (const m of this.pool.members) {
      const node = m.nodeName;
      const writes = m.actions.filter((a) => a.at >= this.startedAt && isRolloutWrite(a)).map((a) => a.at);
      // The poll sees the file late (possibly after the release): only a node with no systemd call before it needs it.
      const seen = this.firstWrite.get(node);
      if (seen !== undefined && !writes.some((w) => w <= seen)) writes.push(seen);
      writes.sort((x, y) => x - y);
      const releases = this.#allReleases.get(node) ?? [];
      let end = -Infinity;
      for (const w of writes) {
        if (w <= end) continue; // inside the interval already open
        end = releases.find((r) => r >= w) ?? Infinity;
        out.push({ node, start: w, end });
      }
    }
    return out;
  }

  async stop(): Promise<void> {
    this.#polling = false;
    this.#stopStore();
    await this.#done;
  }
}

/** The largest number of intervals that overlap at one moment. */
function maxOverlap(xs: readonly Interval[]): number {
  const points = xs.flatMap((x) => [
    { t: x.start, d: +1 },
    { t: x.end, d: -1 },
  ]);
  points.sort((a, b) => a.t - b.t || a.d - b.d);
  let cur = 0;
  let max = 0;
  for (const p of points) max = Math.max(max, (cur += p.d));
  return max;
}

const lease = (p: Pool) =>
  p.sim.store.get("leases", "kube-system", p.secretName) as { metadata: { annotations?: Record<string, string> } } | undefined;
const slotOf = (p: Pool, node: string) => {
  const v = lease(p)?.metadata.annotations?.[`${slotPrefix}${node}`];
  return v === undefined ? undefined : (JSON.parse(v) as { checksum: string; state: string });
};
const events = (p: Pool, reason: string) =>
  p.sim.store.list("events", { namespace: "default" }).filter((e) => e["reason"] === reason) as {
    metadata: { name: string };
    type: string;
    message: string;
    involvedObject: { name: string };
  }[];
const version = async (m: PoolMember) => m.readHostFile("/etc/demo/version");

let pool: Pool;
beforeAll(async () => {
  pool = await startPool({
    nodes,
    nodeAnnotations: { "node-agent.gardener.cloud/rollout-parallelism": "2" },
    extraConfig: {
      controllers: { operatingSystemConfig: { secretName: "gardener-node-agent-pool", kubernetesVersion: "1.33.0" } },
    },
  });
});
afterAll(async () => {
  await pool.stop();
});

async function rollOut(v: string, extraUnit = ""): Promise<{ checksum: string; rec: RolloutRecorder }> {
  const rec0 = { v };
  const checksum = pool.setOsc(demoOsc(rec0.v, extraUnit));
  return { checksum, rec: new RolloutRecorder(pool, v, checksum) };
}

describe("chunked rollout with six agents, N = 2", () => {
  test("never has more than two nodes between their first host write and their slot release", async () => {
    const { checksum, rec } = await rollOut("v1");
    for (const m of pool.members) m.spawn(env);
    await eventually("all six nodes applied v1", () => pool.members.every((m) => m.appliedChecksum() === checksum), {
      timeoutMs: 240_000,
      intervalMs: 50,
    });
    await rec.stop();
    expect(rec.firstWrite.size).toBe(6);
    expect(rec.releases.size).toBe(6);
    expect(maxOverlap(rec.intervals())).toBeLessThanOrEqual(2);
    expect(rec.maxActiveInLease).toBe(2);
    // The Lease ends without slots.
    expect(Object.keys(lease(pool)?.metadata.annotations ?? {}).filter((k) => k.startsWith(slotPrefix))).toEqual([]);
  }, 300_000);

  test("a change whose restarted unit fails halts with exactly two nodes changed", async () => {
    for (const m of pool.members) m.systemd.failJobs("broken.service");
    // This rollout's events only: under load a slot of the first rollout can go unrenewed past
    // staleAfter for a moment, which halts the others then (with an event) until it is renewed.
    const earlier = new Set(events(pool, "RolloutHalted").map((e) => e.metadata.name));
    const thisRollout = () => events(pool, "RolloutHalted").filter((e) => !earlier.has(e.metadata.name));
    const { checksum, rec } = await rollOut("v2", brokenUnit);
    await eventually(
      "two failed slots",
      () => nodes.filter((n) => slotOf(pool, n)?.checksum === checksum && slotOf(pool, n)?.state === "failed").length === 2,
      { timeoutMs: 120_000, intervalMs: 50 },
    );
    await eventually(
      "four nodes halted",
      () =>
        new Set(
          thisRollout()
            .filter((e) => e.message.startsWith("Rollout halted"))
            .map((e) => e.involvedObject.name),
        ).size === 4,
      { timeoutMs: 60_000, intervalMs: 50 },
    );
    await Bun.sleep(3_000); // a quiet period: no further node may change in it
    await rec.stop();
    const changed = (await Promise.all(pool.members.map(version))).filter((v) => v === "v2\n");
    expect(changed).toHaveLength(2);
    expect(pool.members.filter((m) => m.appliedChecksum() === checksum)).toHaveLength(0);
    const halted = thisRollout().filter((e) => e.message.startsWith("Rollout halted"));
    // One Warning per halted node (events are recorded once per checksum and reason).
    expect(halted).toHaveLength(4);
    for (const e of halted) expect(e.type).toBe("Warning");
    const failedNode = pool.members.find((m) => slotOf(pool, m.nodeName)?.state === "failed")!;
    const metrics = await (await fetch(`http://127.0.0.1:${failedNode.metricsPort}/metrics`)).text();
    expect(metrics).toMatch(/^gardener_node_agent_rollout_slot_state 3$/m);
  }, 200_000);

  test("a fixed OSC then proceeds to all six nodes", async () => {
    for (const m of pool.members) m.systemd.clearInjections();
    const { checksum, rec } = await rollOut("v3");
    await eventually("all six nodes applied v3", () => pool.members.every((m) => m.appliedChecksum() === checksum), {
      timeoutMs: 240_000,
      intervalMs: 50,
    });
    await rec.stop();
    expect(maxOverlap(rec.intervals())).toBeLessThanOrEqual(2);
    for (const m of pool.members) expect(await version(m)).toBe("v3\n");
  }, 300_000);

  test("nodes killed while holding the slots count as failed once stale, halting the rest, and resume when they return", async () => {
    const victims: PoolMember[] = [];
    const since = Date.now();
    const earlier = new Set(events(pool, "RolloutHalted").map((e) => e.metadata.name));
    for (const m of pool.members) {
      m.onAction = (a) => {
        if (victims.length >= 2 || victims.includes(m) || a.action !== "Restart" || a.at < since || !a.units.includes("demo.service"))
          return;
        victims.push(m);
        m.agent?.proc.kill("SIGKILL");
      };
    }
    const { checksum, rec } = await rollOut("v4");
    await eventually("two nodes killed mid-change", () => victims.length === 2, { timeoutMs: 120_000, intervalMs: 50 });
    for (const m of pool.members) m.onAction = undefined;
    const dead = victims.map((v) => v.nodeName).sort();
    const others = pool.members.filter((m) => !victims.includes(m));
    for (const d of dead) expect(slotOf(pool, d)).toMatchObject({ checksum, state: "applying" });
    // Not renewed for 6 s (the shortened 5 minutes): the two slots count as failed and the rest halt.
    await eventually(
      "the other four halted behind the stale slots",
      () =>
        new Set(
          events(pool, "RolloutHalted")
            .filter((e) => !earlier.has(e.metadata.name) && e.message.includes(dead.join(", ")))
            .map((e) => e.involvedObject.name),
        ).size === 4,
      { timeoutMs: 60_000, intervalMs: 50 },
    );
    for (const m of others) expect(await version(m)).toBe("v3\n");
    // The halted nodes report their wait in the metrics.
    const metrics = await (await fetch(`http://127.0.0.1:${others[0]!.metricsPort}/metrics`)).text();
    expect(metrics).toMatch(/^gardener_node_agent_rollout_slot_state 0$/m);
    expect(Number(/^gardener_node_agent_rollout_wait_seconds (\S+)$/m.exec(metrics)?.[1])).toBeGreaterThan(5);

    for (const v of victims) v.spawn(env);
    await eventually("all six nodes applied v4", () => pool.members.every((m) => m.appliedChecksum() === checksum), {
      timeoutMs: 240_000,
      intervalMs: 50,
    });
    await rec.stop();
    for (const d of dead) expect(slotOf(pool, d)).toBeUndefined();
    expect(maxOverlap(rec.intervals())).toBeLessThanOrEqual(2);
  }, 400_000);
});
