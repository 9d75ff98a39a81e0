import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { setupHealthCheckController } from "../../src/controllers/healthcheck/index.ts";
import { FakeClock } from "../doubles/fake-clock.ts";
import { quietLog as log, useControllerSandboxes, waitForIdleQueue } from "../harness/controller-sandbox.ts";
import { eventually } from "../harness/eventually.ts";

setDefaultTimeout(30_000);
type Plain = Record<string, any>;

const env = useControllerSandboxes();

/** A running health-check controller for a fresh Node, a local stand-in for the kubelet's healthz and a scriptable containerd. */
async function agent() {
  const sb = await env.start({
    prefix: "hc",
    clock: new FakeClock(Date.UTC(2026, 0, 1)),
  });
  const { sim, nodeName, hostName, fake, clock } = sb;
  const setStatus = (status: Plain) => {
    const n = sb.nodeObject();
    n["status"] = status;
    sim.store.update("nodes", n, { subresource: "status" });
  };
  setStatus({
    conditions: [{ type: "Ready", status: "True" }],
    addresses: [
      { type: "InternalIP", address: "10.0.0.5" },
      { type: "Hostname", address: hostName },
    ],
  });

  let healthzStatus = 200;
  let healthzHits = 0;
  const healthz = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: () => {
      healthzHits++;
      return new Response(healthzStatus === 200 ? "ok" : "not ok", { status: healthzStatus });
    },
  });
  sb.onDispose(() => healthz.stop(true));
  let containerdError: Error | undefined;
  let containerdProbes = 0;

  const controller = setupHealthCheckController({
    kube: sb.kube,
    informers: sb.informers,
    node: sb.node,
    systemd: fake,
    events: sb.events,
    clock,
    log,
    containerdProbe: async () => {
      containerdProbes++;
      if (containerdError !== undefined) throw containerdError;
    },
    kubeletHealthUrl: `http://127.0.0.1:${healthz.port}/healthz`,
    listAddresses: () => ["127.0.0.1/8", "10.0.0.5/24", "fe80::1/64"],
  });
  await sb.run(controller);

  const idle = () => controller.queue.len() === 0 && controller.queue.processingLen() === 0;
  /** Step to the next periodic pass and wait until it has probed both components and finished. */
  const nextPass = async (ms = 30_000) => {
    const [h, c] = [healthzHits, containerdProbes];
    await waitForIdleQueue(controller.queue);
    clock.step(ms);
    await eventually("the next pass", () => healthzHits > h && containerdProbes > c && idle());
  };
  return {
    nodeName,
    fake,
    nodeEvents: sb.nodeEvents,
    nextPass,
    setStatus,
    setHealthz: (code: number) => (healthzStatus = code),
    failContainerd: (msg: string | undefined) => (containerdError = msg === undefined ? undefined : new Error(msg)),
    addresses: () => sb.nodeObject()["status"]?.["addresses"],
    firstPass: () => eventually("the first pass", () => healthzHits > 0 && containerdProbes > 0 && idle()),
  };
}

describe("health-check controller", () => {
  test("probes both components every 30 s and stays quiet while they are healthy", async () => {
    const a = await agent();
    await a.firstPass();
    await a.nextPass();
    await a.nextPass();
    expect(a.nodeEvents()).toEqual([]);
    expect(a.fake.actions).toEqual([]);
  });

  test("restarts the kubelet after a minute of non-200 answers and reports each step on the Node", async () => {
    const a = await agent();
    a.setHealthz(500);
    await a.firstPass();
    await eventually("the first warning", () => a.nodeEvents().length === 1);
    await a.nextPass();
    expect(a.fake.actions).toEqual([]);
    await a.nextPass();
    expect(a.fake.actions).toEqual([{ action: "Restart", units: ["kubelet.service"] }]);
    await eventually("three events", () => a.nodeEvents().length === 3);
    expect(a.nodeEvents()).toEqual([
      "Warning kubelet HealthCheck: Kubelet is unhealthy, health check error: unexpected HTTP status code 500",
      "Warning kubelet HealthCheck: Kubelet is unhealthy for more than 1m0s, restarting it. Health check error: unexpected HTTP status code 500",
      "Normal SystemDUnitRestart restart: processed restart of unit kubelet.service",
    ]);
  });

  test("restarts containerd after a minute without a version answer and announces its recovery", async () => {
    const a = await agent();
    a.failContainerd("connection refused");
    await a.firstPass();
    await a.nextPass();
    await a.nextPass();
    expect(a.fake.actions).toEqual([{ action: "Restart", units: ["containerd.service"] }]);
    await a.nextPass(); // still failing: a new minute starts
    a.failContainerd(undefined);
    await a.nextPass();
    await eventually("five events", () => a.nodeEvents().length === 5);
    expect(a.nodeEvents()).toEqual([
      "Warning containerd HealthCheck: Containerd is unhealthy: connection refused",
      "Warning containerd HealthCheck: Containerd is unhealthy for more than 1m0s, restarting it: connection refused",
      "Normal SystemDUnitRestart restart: processed restart of unit containerd.service",
      "Warning containerd HealthCheck: Containerd is unhealthy: connection refused",
      "Normal containerd HealthCheck: Containerd is healthy",
    ]);
  });

  test("puts the lost InternalIP back into the Node status as soon as the kubelet drops it", async () => {
    const a = await agent();
    await a.firstPass();
    a.setStatus({ conditions: [{ type: "Ready", status: "True" }], addresses: [] });
    await eventually("the address to come back", () => (a.addresses() ?? []).length > 0);
    expect(a.addresses()).toEqual([{ type: "InternalIP", address: "10.0.0.5" }]);
    await eventually("two events", () => a.nodeEvents().length === 2);
    expect(a.nodeEvents()).toEqual([
      "Warning kubelet HealthCheck: Node status does neither have an internal nor an external IP, try to recover from last known internal IP: 10.0.0.5",
      "Normal kubelet HealthCheck: Updated the lost internal IP address of node status to the previous known: 10.0.0.5 ",
    ]);
    expect(a.fake.actions).toEqual([]);
  });
});
