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

/** One agent process' lease controller against the simulator, time driven by a FakeClock. */
async function agent(opts: { knownNodeName?: boolean; startMs?: number } = {}) {
  const sb = await env.start({ prefix: "lease", clock: new FakeClock(opts.startMs ?? Date.UTC(2026, 0, 2, 3, 4, 5, 123)) });
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
