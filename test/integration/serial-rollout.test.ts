// Serial reconciliation (osc-controller spec 9.2, scenario 18) with three compiled agents against one
// API-server simulator: apply windows never overlap, an expired holder is taken over, and an agent
// SIGKILLed while holding the Lease resumes after its restart and releases it.
import { afterEach, describe, expect, test } from "bun:test";
import type { StoreEvent } from "../doubles/apiserver/store.ts";
import { eventually } from "../harness/eventually.ts";
import { demoOsc, startPool, type Pool, type PoolMember } from "../harness/pool.ts";

const hosts = ["serial-1", "serial-2", "serial-3"];
const serial = { "reconciliation.osc.node-agent.gardener.cloud/serial": "true" };

const osc = (
  version: string,
) => `${demoOsc(version)}${hosts.map((h) => `  - path: /etc/demo/host-file\n    hostName: ${h}\n    content: {inline: {data: "${h} ${version}\\n"}}`).join("\n")}
`;

const writeActions = new Set(["Enable", "Disable", "DaemonReload", "Start", "Stop", "Restart"]);
const microTime = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");

/** Records, per node, when its Node got a checksum, and every holder the Lease had, in order. */
function recordStore(pool: Pool) {
  const appliedAt = new Map<string, Map<string, number>>();
  const holders: string[] = [];
  const stop = pool.sim.store.subscribe((e: StoreEvent) => {
    const o = e.object as {
      kind?: string;
      metadata?: { name?: string; annotations?: Record<string, string> };
      spec?: { holderIdentity?: string };
    };
    if (e.def.resource === "nodes") {
      const sum = o.metadata?.annotations?.["checksum/cloud-config-data"];
      const name = o.metadata?.name ?? "";
      if (sum !== undefined) {
        const m = appliedAt.get(name) ?? new Map<string, number>();
        if (!m.has(sum)) m.set(sum, Date.now());
        appliedAt.set(name, m);
      }
    }
    if (e.def.resource === "leases" && o.metadata?.name === pool.secretName) {
      const h = o.spec?.holderIdentity ?? "";
      if (holders.at(-1) !== h) holders.push(h);
    }
  });
  return { appliedAt, holders, stop };
}

/** [first systemd write after `since`, the moment its Node got `checksum`] per node. */
function windows(pool: Pool, rec: ReturnType<typeof recordStore>, checksum: string, since: number) {
  return pool.members
    .map((m: PoolMember) => {
      const first = m.actions.find((a) => a.at >= since && writeActions.has(a.action));
      return { node: m.nodeName, start: first?.at ?? NaN, end: rec.appliedAt.get(m.nodeName)?.get(checksum) ?? NaN };
    })
    .sort((a, b) => a.start - b.start);
}

function expectDisjoint(ws: { node: string; start: number; end: number }[]): void {
  for (const w of ws) {
    expect(Number.isNaN(w.start)).toBe(false);
    expect(w.end).toBeGreaterThanOrEqual(w.start);
  }
  for (let i = 1; i < ws.length; i++) expect(ws[i]!.start).toBeGreaterThan(ws[i - 1]!.end);
}

let pool: Pool | undefined;
afterEach(async () => {
  await pool?.stop();
  pool = undefined;
});

describe("serial reconciliation with three agents", () => {
  test("applies one node at a time, takes over an expired holder, and leaves the Lease free", async () => {
    const p = await startPool({ nodes: hosts });
    pool = p;
    const rec = recordStore(p);
    const sum = p.setOsc(osc("v1"), serial);
    const secretUid = (p.sim.store.get("secrets", "kube-system", p.secretName)?.["metadata"] as { uid: string }).uid;
    // A holder that died 700 s ago (its lease ran out after 600 s).
    const dead = microTime(Date.now() - 700_000);
    p.sim.store.create("leases", {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: {
        name: p.secretName,
        namespace: "kube-system",
        ownerReferences: [
          { apiVersion: "v1", kind: "Secret", name: p.secretName, uid: secretUid, controller: true, blockOwnerDeletion: true },
        ],
      },
      spec: { holderIdentity: "ghost-host", leaseDurationSeconds: 600, acquireTime: dead, renewTime: dead },
    });
    const since = Date.now();
    for (const m of p.members) m.spawn();
    await eventually("every node applied v1", () => p.members.every((m) => m.appliedChecksum() === sum), {
      timeoutMs: 90_000,
      intervalMs: 50,
    });

    await eventually(
      "the Lease is free",
      () =>
        (p.sim.store.get("leases", "kube-system", p.secretName) as { spec: { holderIdentity?: string } }).spec.holderIdentity === undefined,
      { timeoutMs: 60_000, intervalMs: 50 },
    );
    expectDisjoint(windows(p, rec, sum, since));
    // Holders changed one by one: ghost → a node → free → a node → free → a node → free.
    expect(rec.holders[0]).toBe("ghost-host");
    const after = rec.holders.slice(1);
    expect(after).toHaveLength(6);
    expect(after.filter((_, i) => i % 2 === 1)).toEqual(["", "", ""]);
    expect(new Set(after.filter((_, i) => i % 2 === 0))).toEqual(new Set(hosts));
    // The request log agrees: successful writes of the (pre-existing) Lease come in (acquire, release)
    // pairs of one agent.
    const leaseWriters = p.sim.requests
      .filter((r) => r.verb === "update" && r.code < 300 && r.path.endsWith(`/namespaces/kube-system/leases/${p.secretName}`))
      .map((r) => r.user.replace("gardener.cloud:node-agent:machine:machine-", ""));
    expect(leaseWriters).toHaveLength(6);
    for (let i = 0; i < 6; i += 2) expect(leaseWriters[i + 1]).toBe(leaseWriters[i]!);
    for (const m of p.members) expect(await m.readHostFile("/etc/demo/host-file")).toBe(`${m.nodeName} v1\n`);

    // The Lease ends free and nobody takes it again.
    const writes = () =>
      p.sim.requests.filter(
        (r) =>
          r.resource === "leases" &&
          r.namespace === "kube-system" &&
          (r.verb === "update" || r.verb === "create") &&
          r.path.includes(p.secretName),
      ).length;
    const n = writes();
    await Bun.sleep(1_500); // a quiet period: nothing is expected to happen in it
    expect(writes()).toBe(n);
    const lease = p.sim.store.get("leases", "kube-system", p.secretName) as { spec: Record<string, unknown> };
    expect(lease.spec).toEqual({});
    rec.stop();
  }, 150_000);

  test("an agent SIGKILLed while holding the Lease resumes after its restart and releases it", async () => {
    const p = await startPool({ nodes: hosts });
    pool = p;
    const v1 = p.setOsc(osc("v1"), serial);
    for (const m of p.members) m.spawn();
    await eventually("every node applied v1", () => p.members.every((m) => m.appliedChecksum() === v1), {
      timeoutMs: 90_000,
      intervalMs: 50,
    });

    const rec = recordStore(p);
    // Kill the first node that restarts a unit for v2, as the restart arrives: it holds the Lease mid-apply.
    let victim: PoolMember | undefined;
    for (const m of p.members) {
      m.onAction = (a) => {
        if (victim !== undefined || a.action !== "Restart") return;
        victim = m;
        m.agent?.proc.kill("SIGKILL");
      };
    }
    const since = Date.now();
    const v2 = p.setOsc(osc("v2"), serial);
    await eventually("a node killed while restarting a unit for v2", () => victim !== undefined, { timeoutMs: 60_000, intervalMs: 50 });
    for (const m of p.members) m.onAction = undefined;
    await victim!.agent!.proc.exited;
    expect(victim!.appliedChecksum()).toBe(v1);
    const heldBy = (p.sim.store.get("leases", "kube-system", p.secretName) as { spec: { holderIdentity?: string } }).spec.holderIdentity;
    expect(heldBy).toBe(victim!.nodeName);

    // Nobody else applies while the dead agent holds a live Lease.
    const others = p.members.filter((m) => m !== victim);
    const othersWrites = () => others.flatMap((m) => m.actions.filter((a) => a.at >= since && writeActions.has(a.action))).length;
    const before = othersWrites();
    await Bun.sleep(2_000); // a quiet period: nothing is expected to happen in it
    expect(othersWrites()).toBe(before);
    expect(before).toBe(0);

    victim!.spawn();
    try {
      await eventually("every node applied v2", () => p.members.every((m) => m.appliedChecksum() === v2), {
        timeoutMs: 60_000,
        intervalMs: 50,
      });
    } catch (err) {
      for (const m of p.members) console.error(`==== ${m.nodeName}\n${m.agent?.output().split("\n").slice(-40).join("\n")}`);
      throw err;
    }
    await eventually(
      "the Lease is free",
      () =>
        (p.sim.store.get("leases", "kube-system", p.secretName) as { spec: { holderIdentity?: string } }).spec.holderIdentity === undefined,
      { timeoutMs: 60_000, intervalMs: 50 },
    );
    expectDisjoint(windows(p, rec, v2, since));
    for (const m of p.members) expect(await m.readHostFile("/etc/demo/version")).toBe("v2\n");
    const lease = p.sim.store.get("leases", "kube-system", p.secretName) as { spec: Record<string, unknown> };
    expect(lease.spec).toEqual({});
    rec.stop();
  }, 150_000);
});
