import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { realClock } from "../../src/clock/index.ts";
import { setupLeaseController } from "../../src/controllers/lease/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { InformerSet } from "../../src/kube/informer-set.ts";
import { nodes } from "../../src/kube/resources.ts";
import { HealthChecks } from "../../src/server/health.ts";
import { createMetricsRegistry, type MetricsRegistry } from "../../src/server/metrics.ts";
import { startHealthServer, type RunningServer } from "../../src/server/serve.ts";
import { RestartRequested } from "../../src/kube/reconcile.ts";
import { acceptanceOsc } from "../fixtures/osc/acceptance-osc.ts";
import { OscWorld } from "../fixtures/osc/harness.ts";
import { FakeClock } from "../doubles/fake-clock.ts";
import { quietLog as log, useControllerSandboxes, waitForIdleQueue } from "../harness/controller-sandbox.ts";
import { eventually } from "../harness/eventually.ts";

type Plain = Record<string, any>;

setDefaultTimeout(30_000);

const env = useControllerSandboxes();

/**
 * One agent process' lease controller against the simulator, time driven by a FakeClock. The
 * sandbox client's token bucket runs on real time, so it gets room enough never to throttle: with
 * the fake clock racing ahead, a bucket wait of 200 ms (wall time) would outlast a Lease request's
 * 5 s deadline (fake time), which cannot happen when both run on the same clock as in the agent.
 */
async function agent(opts: { knownNodeName?: boolean; startMs?: number } = {}) {
  const sb = await env.start({
    prefix: "lease",
    clock: new FakeClock(opts.startMs ?? Date.UTC(2026, 0, 2, 3, 4, 5, 123)),
    kubeRate: { qps: 1_000, burst: 1_000 },
  });
  const { sim, id, hostName, nodeName, clock, kube, informers } = sb;
  const node = sb.nodeObject();
  const health = new HealthChecks();
  const metrics: MetricsRegistry = createMetricsRegistry();
  const setup = setupLeaseController({
    kube,
    informers,
    node: { hostName, nodeName: (opts.knownNodeName ?? true) ? nodeName : undefined },
    clock,
    log,
    health,
    metrics,
  });
  const start = () => sb.run(setup?.controller);
  const leaseName = `gardener-node-agent-${nodeName}`;
  const lease = () => sim.store.get("leases", "kube-system", leaseName) as Plain | undefined;
  // A create is a POST to the collection (no name in the record): count those of this agent's lifetime.
  const since = Date.now();
  const leaseWrites = () =>
    sim.requests.filter(
      (r) =>
        r.resource === "leases" &&
        r.code < 300 &&
        ((r.verb === "update" && r.name === leaseName) || (r.verb === "create" && r.time >= since)),
    ).length;
  return { id, hostName, nodeName, node, clock, kube, informers, health, metrics, setup, start, lease, leaseName, leaseWrites };
}

/** Steps the fake clock in `stepMs` slices up to `totalMs`, letting each woken reconcile finish first. */
async function advance(a: Awaited<ReturnType<typeof agent>>, totalMs: number, stepMs = 1_000): Promise<void> {
  for (let t = 0; t < totalMs; t += stepMs) {
    a.clock.step(stepMs);
    await idle(a);
  }
}

/** Woken sleepers have enqueued their keys and every reconcile has returned. */
async function idle(a: Awaited<ReturnType<typeof agent>>): Promise<void> {
  await a.clock.settle();
  const q = a.setup?.controller.queue;
  if (q === undefined) return;
  await waitForIdleQueue(q, { timeoutMs: 5_000 });
  await a.clock.settle();
}

/** renewTime of every write of this agent's Lease, in ms, as the simulator stores them. */
function recordRenewals(a: Awaited<ReturnType<typeof agent>>): number[] {
  const times: number[] = [];
  const unsubscribe = env.sim.store.subscribe((e) => {
    const m = e.object["metadata"] as Plain;
    if (e.def.resource === "leases" && m["name"] === a.leaseName) times.push(Date.parse((e.object["spec"] as Plain)["renewTime"]));
  });
  env.afterTest(unsubscribe);
  return times;
}

const largestGap = (times: readonly number[]): number => Math.max(...times.slice(1).map((t, i) => t - (times[i] ?? t)));

/**
 * Runs the agent on its own time up to `endMs`: waits until it is quiet — nothing queued, and no
 * reconcile in flight or only one whose request the simulator holds — then jumps to the next timer
 * (a requeue, a backoff, a request deadline). A hang the deadline ended is over once the simulator
 * saw the client go, before the next look.
 */
async function runUntil(a: Awaited<ReturnType<typeof agent>>, endMs: number): Promise<void> {
  const q = a.setup?.controller.queue;
  if (q === undefined) throw new Error("no lease controller");
  const faults = env.sim.faults;
  const quiet = async () => {
    await a.clock.settle();
    await eventually("the agent to wait on its clock", () => ({ queued: q.len(), processing: q.processingLen(), held: faults.held }), {
      until: (s) => s.queued === 0 && (s.processing === 0 || s.held > 0),
      timeoutMs: 5_000,
      intervalMs: 1,
    });
  };
  for (;;) {
    await quiet();
    const next = a.clock.nextDeadline();
    if (next === undefined || next > endMs) break;
    const wasHeld = faults.held > 0;
    a.clock.set(next);
    if (wasHeld) await eventually("the hung request to end", () => faults.held, { until: (n) => n === 0, timeoutMs: 5_000 });
  }
  a.clock.set(endMs);
  await quiet();
}

describe("lease controller margin (issue 27)", () => {
  const t0 = Date.UTC(2026, 0, 1, 0, 0, 0, 0);

  test("one hung PUT costs a 15 s gap: given up after 5 s, retried 5 ms later", async () => {
    const a = await agent({ startMs: t0 });
    const renewals = recordRenewals(a);
    await a.start();
    await eventually("the first renewal", () => renewals.length === 1, { timeoutMs: 5_000 });
    await idle(a);
    env.sim.faults.hangNext(1, { verb: "update", resource: "leases" });
    a.clock.set(t0 + 10_000); // the renewal is due: its PUT hangs
    await eventually("the PUT to hang", () => env.sim.faults.held, { until: (n) => n === 1, timeoutMs: 5_000 });
    expect(a.clock.nextDeadline()).toBe(t0 + 15_000); // the request's own deadline
    await runUntil(a, t0 + 60_000);

    expect(renewals.map((t) => t - t0)).toEqual([0, 15_005, 25_005, 35_005, 45_005, 55_005]);
    expect(largestGap(renewals)).toBeLessThan(25_000);
    const hung = env.sim.requests.filter((r) => r.resource === "leases" && r.name === a.leaseName && r.code === 504);
    expect(hung.map((r) => r.verb)).toEqual(["update"]); // ended by the agent giving up
  });

  test("when every Lease request hangs, five more attempts start before the lease expires", async () => {
    const a = await agent({ startMs: t0 });
    const renewals = recordRenewals(a);
    await a.start();
    await eventually("the first renewal", () => renewals.length === 1, { timeoutMs: 5_000 });
    await idle(a);
    const before = env.sim.requests.length;
    env.sim.faults.hangNext(1_000_000, { resource: "leases" });
    a.clock.set(t0 + 10_000);
    await eventually("the PUT to hang", () => env.sim.faults.held, { until: (n) => n === 1, timeoutMs: 5_000 });
    await runUntil(a, t0 + 40_000);
    const givenUp = env.sim.requests.slice(before).filter((r) => r.resource === "leases" && r.code === 504);
    // The renewal due at 10 s, then retries (a GET first after a failed write), each request given up
    // after 5 s and retried after 5 ms, 10 ms, …: the sixth attempt is still hanging at 40 s.
    expect(givenUp.map((r) => r.verb)).toEqual(["update", "get", "get", "get", "get"]);
    expect(env.sim.faults.held).toBe(1);
    expect(renewals).toHaveLength(1);
  });

  test("after a 25 s storm of 500s the next renewal follows within 2.5 s, inside the 40 s lease", async () => {
    const a = await agent({ startMs: t0 });
    const renewals = recordRenewals(a);
    await a.start();
    await eventually("the first renewal", () => renewals.length === 1, { timeoutMs: 5_000 });
    await idle(a);
    // The worst moment: the storm begins just before a renewal is due and ends just after a failed
    // attempt, so the next one is a whole backoff away.
    env.sim.faults.failNext(1_000_000, { resource: "leases", status: 500 });
    await runUntil(a, t0 + 35_000);
    const failedAt = () => env.sim.requests.filter((r) => r.resource === "leases" && r.code === 500).map((r) => r.time);
    const failuresBefore = failedAt().length;
    await runUntil(a, a.clock.nextDeadline() ?? t0 + 35_000); // one more failed attempt
    expect(failedAt().length).toBe(failuresBefore + 1);
    const stormEnd = a.clock.now();
    await env.sim.faults.clear();
    await runUntil(a, t0 + 80_000);

    expect(stormEnd - t0).toBeGreaterThanOrEqual(35_000); // 25 s of errors from the renewal due at 10 s
    const firstAfter = renewals.find((t) => t > stormEnd) ?? Number.NaN;
    expect(firstAfter - stormEnd).toBeLessThanOrEqual(2_500);
    expect(renewals[1]).toBe(firstAfter);
    expect(largestGap(renewals)).toBeLessThan(40_000);
    // Afterwards the usual rhythm again.
    expect(renewals.slice(1).map((t) => t - firstAfter)).toEqual(
      [0, 10_000, 20_000, 30_000, 40_000].filter((d) => firstAfter + d <= t0 + 80_000),
    );
  });
});

describe("lease controller", () => {
  test("creates the heartbeat Lease with the exact shape (6-digit renewTime accepted by the API)", async () => {
    const a = await agent();
    await a.start();
    await eventually("the lease", () => a.lease() !== undefined, { timeoutMs: 5_000 });
    const lease = a.lease() as Plain;
    expect(lease["apiVersion"]).toBe("coordination.k8s.io/v1");
    expect(lease["kind"]).toBe("Lease");
    expect(lease["metadata"]["name"]).toBe(`gardener-node-agent-${a.nodeName}`);
    expect(lease["metadata"]["namespace"]).toBe("kube-system");
    expect(lease["metadata"]["ownerReferences"]).toEqual([
      { apiVersion: "v1", kind: "Node", name: a.nodeName, uid: a.node["metadata"]["uid"], controller: true, blockOwnerDeletion: true },
    ]);
    expect(lease["spec"]).toEqual({
      holderIdentity: `gardener-node-agent-${a.nodeName}`,
      leaseDurationSeconds: 40,
      renewTime: "2026-01-02T03:04:05.123000Z",
    });
  });

  test("renews 4 times in 35 s (at 0, 10, 20 and 30 s) with one write each", async () => {
    const a = await agent({ startMs: Date.UTC(2026, 0, 1, 0, 0, 0, 0) });
    const renewTimes: string[] = [];
    const unsubscribe = env.sim.store.subscribe((e) => {
      const m = e.object["metadata"] as Plain;
      if (e.def.resource === "leases" && m["name"] === a.leaseName) renewTimes.push((e.object["spec"] as Plain)["renewTime"]);
    });
    env.afterTest(unsubscribe);
    await a.start();
    await eventually("the first renewal", () => a.leaseWrites() === 1, { timeoutMs: 5_000 });
    // The first reconcile must have returned (and scheduled its 10 s requeue) before time moves.
    await idle(a);
    await advance(a, 35_000);
    expect(renewTimes).toEqual([
      "2026-01-01T00:00:00.000000Z",
      "2026-01-01T00:00:10.000000Z",
      "2026-01-01T00:00:20.000000Z",
      "2026-01-01T00:00:30.000000Z",
    ]);
    expect(a.leaseWrites()).toBe(4);
    // One request per renewal: the only read is the GET (404) before the create.
    expect(
      env.sim.requests.filter((r) => r.resource === "leases" && r.verb === "get" && r.name === a.leaseName).map((r) => r.code),
    ).toEqual([404]);
    expect(a.setup?.heartbeat.renewals).toBe(4);
    const text = await a.metrics.render();
    expect(text).toContain("gardener_node_agent_lease_renewals_total 4\n");
    expect(text).toContain(`gardener_node_agent_lease_last_renewal_timestamp_seconds ${Date.UTC(2026, 0, 1, 0, 0, 30) / 1000}\n`);
  });

  test("replaces a foreign spec and a stale owner UID, and recovers from a conflicting write", async () => {
    const a = await agent();
    env.sim.store.create("leases", {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: {
        name: a.leaseName,
        namespace: "kube-system",
        ownerReferences: [{ apiVersion: "v1", kind: "Node", name: a.nodeName, uid: "old-uid", controller: true }],
      },
      spec: { holderIdentity: "someone-else", acquireTime: "2025-01-01T00:00:00.000000Z", leaseTransitions: 2 },
    });
    await a.start();
    await eventually("the first renewal", () => a.leaseWrites() === 1, { timeoutMs: 5_000 });
    const lease = a.lease() as Plain;
    expect(lease["spec"]).toEqual({ holderIdentity: a.leaseName, leaseDurationSeconds: 40, renewTime: "2026-01-02T03:04:05.123000Z" });
    expect(lease["metadata"]["ownerReferences"]).toEqual([
      { apiVersion: "v1", kind: "Node", name: a.nodeName, uid: a.node["metadata"]["uid"], controller: true, blockOwnerDeletion: true },
    ]);

    // Someone else writes the Lease: the agent's next PUT carries a stale resourceVersion (409), the retry succeeds.
    env.sim.store.update("leases", { ...lease, metadata: { ...lease["metadata"], labels: { touched: "yes" } } });
    await advance(a, 10_000);
    await eventually(
      "the renewal after the conflict",
      async () => {
        a.clock.step(50);
        await a.clock.settle();
        return a.leaseWrites() === 2;
      },
      { timeoutMs: 5_000 },
    );
    expect(env.sim.requests.some((r) => r.resource === "leases" && r.name === a.leaseName && r.code === 409)).toBe(true);
    expect((a.lease() as Plain)["metadata"]["labels"]).toEqual({ touched: "yes" });
  });

  test.each([
    ["5xx answers", async () => env.sim.faults.failNext(1_000_000, { resource: "leases", status: 503 })],
    ["refused connections", async () => env.sim.faults.refuseConnections()],
  ])("turns healthz 500 after more than 40 s without renewal (%s) and 200 after the next renewal", async (_what, fault) => {
    const a = await agent();
    const server: RunningServer = startHealthServer({ bindAddress: "127.0.0.1", port: 0 }, a.health);
    env.afterTest(() => server.stop());
    const healthz = async () => (await fetch(`http://127.0.0.1:${server.port}/healthz`)).status;
    await a.start();
    await eventually("the first renewal", () => a.leaseWrites() === 1, { timeoutMs: 5_000 });
    expect(await healthz()).toBe(200);

    await fault();
    await advance(a, 40_000);
    expect(a.setup?.heartbeat.renewals).toBe(1);
    expect(await healthz()).toBe(200); // exactly 40 s: not yet longer than the lease duration
    await advance(a, 1_000);
    expect(await healthz()).toBe(500);
    const verbose = await (await fetch(`http://127.0.0.1:${server.port}/healthz?verbose`)).text();
    expect(verbose).toContain("[-]lease-renewal failed");

    await env.sim.faults.clear();
    await eventually(
      "the renewal after the fault",
      async () => {
        a.clock.step(1_000);
        await a.clock.settle();
        return a.setup?.heartbeat.renewals === 2;
      },
      { timeoutMs: 20_000 },
    );
    expect(await healthz()).toBe(200);
  });

  test("is not registered when the node name was unknown at start, even if the Node appears later", async () => {
    const a = await agent({ knownNodeName: false });
    expect(a.setup).toBeUndefined();
    expect(await a.health.run("healthz", "lease-renewal")).toBeUndefined();
    expect(await a.metrics.render()).not.toContain("gardener_node_agent_lease_renewals_total");
    await a.start();
    await a.clock.settle(20);
    expect(a.lease()).toBeUndefined();
  });

  test("a Node appearing after start restarts the agent (OSC controller); the next start registers the lease controller", async () => {
    const w = await OscWorld.create(env.sim, { withNode: false });
    env.afterTest(() => w.dispose());
    w.setOsc(acceptanceOsc());
    expect(await w.reconcile()).toEqual({ requeueAfterMs: 5_000 }); // not registered yet
    w.createNode();
    await expect(w.reconcile()).rejects.toBeInstanceOf(RestartRequested);

    // The restarted process discovers the node name at start-up, so the lease controller now exists.
    const kube = new KubeClient({
      config: { server: env.sim.url, caPem: env.sim.caPem, credentials: { kind: "token", token: env.sim.adminToken } },
    });
    env.afterTest(() => kube.close());
    const found = await kube.list(nodes, "", { labelSelector: `kubernetes.io/hostname=${w.hostName}` });
    expect(found.items.map((n) => n.metadata.name)).toEqual([w.nodeName]);
    const informers = new InformerSet({ kube, clock: realClock, log });
    const setup = setupLeaseController({
      kube,
      informers,
      node: { hostName: w.hostName, nodeName: found.items[0]?.metadata.name },
      clock: new FakeClock(),
      log,
      health: new HealthChecks(),
      metrics: createMetricsRegistry(),
    });
    expect(setup?.controller.name).toBe("lease");
  });

  test("is registered with its health check when the node name was known at start", async () => {
    const a = await agent();
    expect(a.setup).toBeDefined();
    expect(await a.health.run("healthz", "lease-renewal")).toEqual({ ok: true, results: [{ name: "lease-renewal", ok: true }] });
  });

  test("stops renewing once the Node is deleted", async () => {
    const a = await agent();
    await a.start();
    await eventually("the first renewal", () => a.leaseWrites() === 1, { timeoutMs: 5_000 });
    env.sim.store.delete("nodes", "", a.nodeName, { gracePeriodSeconds: 0 });
    await eventually(
      "the cache to drop the node",
      () => a.informers.informersOf(nodes, "").every((inf) => inf.get(a.nodeName) === undefined),
      { timeoutMs: 5_000 },
    );
    await advance(a, 30_000);
    expect(a.leaseWrites()).toBe(1);
  });
});
