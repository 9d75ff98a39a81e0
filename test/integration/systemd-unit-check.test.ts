import { afterAll, afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realClock } from "../../src/clock/index.ts";
import { setupSystemdUnitCheckController } from "../../src/controllers/systemdunitcheck/index.ts";
import { createHostFs } from "../../src/host/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { InformerSet } from "../../src/kube/informer-set.ts";
import type { Resource } from "../../src/kube/resources.ts";
import type { Kube, KubeObject, PatchType, WriteOptions } from "../../src/kube/types.ts";
import type { Logger } from "../../src/log/types.ts";
import { createDbusSystemd } from "../../src/systemd/dbus.ts";
import type { Systemd } from "../../src/systemd/types.ts";
import { type ApiServerSim, startApiServer } from "../doubles/apiserver/index.ts";
import { FakeClock } from "../doubles/fake-clock.ts";
import { FakeSystemd, startSystemdDouble, type UnitSeed } from "../doubles/systemd/index.ts";
import { eventually } from "../harness/eventually.ts";

setDefaultTimeout(30_000);
const log: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => log };
type Plain = Record<string, any>;
const start = Date.UTC(2026, 0, 1, 0, 0, 0);

let sim: ApiServerSim;
beforeAll(async () => {
  sim = await startApiServer();
});
afterAll(async () => {
  await sim.stop();
});
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const lastApplied = (units: string, extensionUnits = "[]") => `apiVersion: extensions.gardener.cloud/v1alpha1
kind: OperatingSystemConfig
spec:
  type: debian
  units: ${units}
status:
  extensionUnits: ${extensionUnits}
`;

let seq = 0;

/** A running systemd-unit-check controller for a fresh Node that carries a kubelet Ready condition. */
async function agent(opts: { units: UnitSeed[]; file?: string; overDbus?: boolean }) {
  const id = ++seq;
  const hostName = `suc-host-${id}`;
  const nodeName = `suc-node-${id}`;
  sim.store.create("nodes", { apiVersion: "v1", kind: "Node", metadata: { name: nodeName, labels: { "kubernetes.io/hostname": hostName } } });
  const node = sim.store.get("nodes", "", nodeName) as Plain;
  node["status"] = {
    conditions: [{ type: "Ready", status: "True", reason: "KubeletReady", message: "kubelet is posting ready status", lastHeartbeatTime: "2026-01-01T00:00:00Z", lastTransitionTime: "2025-12-01T00:00:00Z" }],
  };
  sim.store.update("nodes", node, { subresource: "status" });

  const root = mkdtempSync(join(tmpdir(), "suc-"));
  const stateDir = join(root, "var/lib/gardener-node-agent");
  mkdirSync(stateDir, { recursive: true });
  const writeLastApplied = (text: string) => writeFileSync(join(stateDir, "last-applied-osc.yaml"), text);
  if (opts.file !== undefined) writeLastApplied(opts.file);

  const clock = new FakeClock(start);
  const fake = new FakeSystemd({ clock, units: opts.units });
  let systemd: Systemd = fake;
  if (opts.overDbus === true) {
    const double = await startSystemdDouble({ clock, units: opts.units });
    const dbus = await createDbusSystemd({ address: double.address, log });
    systemd = dbus;
    cleanups.push(async () => {
      dbus.close();
      await double.stop();
    });
  }
  const kube = new KubeClient({ config: { server: sim.url, caPem: sim.caPem, credentials: { kind: "token", token: sim.adminToken } } });
  const informers = new InformerSet({ kube, clock: realClock, log });
  const sent: Array<{ type: PatchType; body: unknown; subresource: string | undefined }> = [];
  const recording: Kube = Object.assign(Object.create(kube) as KubeClient, {
    patch: <T extends KubeObject>(res: Resource, ns: string, name: string, type: PatchType, body: unknown, o?: WriteOptions) => {
      sent.push({ type, body, subresource: o?.subresource });
      return kube.patch<T>(res, ns, name, type, body, o);
    },
  });
  const controller = setupSystemdUnitCheckController({
    kube: recording,
    informers,
    node: { hostName, nodeName },
    host: createHostFs(root),
    systemd,
    clock,
    log,
    config: { syncPeriod: 60_000, stuckThreshold: 300_000 },
  });
  const stop = new AbortController();
  informers.start(stop.signal);
  await informers.waitForSync(stop.signal);
  const running = controller.start(stop.signal);
  cleanups.push(async () => {
    stop.abort();
    await running;
    await informers.stopped();
    kube.close();
    rmSync(root, { recursive: true, force: true });
  });

  const conditions = (): Plain[] => (sim.store.get("nodes", "", nodeName) as Plain)["status"]?.["conditions"] ?? [];
  const condition = (type = "SystemdUnitsReady"): Plain | undefined => conditions().find((c) => c["type"] === type);
  const statusPatches = () => sim.requests.filter((r) => r.resource === "nodes" && r.verb === "patch" && r.name === nodeName);
  /** The next pass: once the controller waits on its requeue, step the clock by the sync period. */
  const nextPass = async () => {
    const before = statusPatches().length;
    await eventually("the requeue timer", () => clock.pending() > 0);
    clock.step(60_000);
    await eventually("the next status patch", () => statusPatches().length > before);
  };
  return { nodeName, clock, fake, controller, sent, condition, conditions, statusPatches, nextPass, writeLastApplied };
}

describe("systemd-unit-check controller", () => {
  test("publishes AllUnitsHealthy next to the kubelet's Ready condition with a status-only strategic-merge patch", async () => {
    const a = await agent({
      units: [
        { name: "kubelet.service", activeState: "active", subState: "running" },
        { name: "setup.service", activeState: "inactive", subState: "dead", serviceType: "oneshot" },
      ],
      file: lastApplied(`[{name: kubelet.service, enable: true, content: "[Unit]"}, {name: setup.service, content: "[Unit]"}]`),
    });
    await eventually("the condition", () => a.condition() !== undefined);
    expect(a.condition()).toEqual({
      type: "SystemdUnitsReady",
      status: "True",
      lastHeartbeatTime: "2026-01-01T00:00:00Z",
      lastTransitionTime: "2026-01-01T00:00:00Z",
      reason: "AllUnitsHealthy",
      message: "All systemd units from the operating system config are running as expected.",
    });
    expect(a.condition("Ready")?.["reason"]).toBe("KubeletReady");
    expect(a.statusPatches().map((r) => r.subresource)).toEqual(["status"]);
    expect(a.sent).toEqual([{ type: "strategic", subresource: "status", body: { status: { conditions: [a.condition()] } } }]);
    expect(a.fake.actions.map((x) => x.action)).toEqual(["ListByNames", "GetServiceType"]);
  });

  test("keeps lastTransitionTime and newer kubelet heartbeats when the status does not change", async () => {
    const a = await agent({
      units: [{ name: "kubelet.service", activeState: "active", subState: "running" }],
      file: lastApplied(`[{name: kubelet.service, enable: true}]`),
    });
    await eventually("the condition", () => a.condition() !== undefined);
    // The kubelet posts a newer heartbeat; this agent's cache may not have seen it yet when it patches.
    sim.store.patch("nodes", "", a.nodeName, "strategic", { status: { conditions: [{ type: "Ready", lastHeartbeatTime: "2026-01-01T00:00:45Z" }] } }, { subresource: "status" });
    await a.nextPass();
    expect(a.condition()?.["lastHeartbeatTime"]).toBe("2026-01-01T00:01:00Z");
    expect(a.condition()?.["lastTransitionTime"]).toBe("2026-01-01T00:00:00Z");
    expect(a.condition("Ready")?.["lastHeartbeatTime"]).toBe("2026-01-01T00:00:45Z");
    expect(a.conditions().map((c) => c["type"])).toEqual(["Ready", "SystemdUnitsReady"]);
  });

  test("lists the unhealthy units in name order as their systemd states change", async () => {
    const a = await agent({
      units: [
        { name: "kubelet.service", activeState: "active", subState: "running" },
        { name: "containerd.service", activeState: "active", subState: "running" },
        { name: "b-disabled.service", activeState: "active", subState: "running" },
      ],
      file: lastApplied(`[{name: kubelet.service, enable: true}, {name: containerd.service, content: x}]`, `[{name: b-disabled.service, enable: false}, {name: missing.service, enable: true}]`),
    });
    await eventually("the condition", () => a.condition() !== undefined);
    expect(a.condition()?.["message"]).toBe("b-disabled.service: active but should be disabled; missing.service: not loaded");
    await a.fake.stop("kubelet.service");
    await a.fake.stop("b-disabled.service");
    await a.nextPass();
    expect(a.condition()?.["status"]).toBe("False");
    expect(a.condition()?.["lastTransitionTime"]).toBe("2026-01-01T00:00:00Z");
    expect(a.condition()?.["message"]).toBe("kubelet.service: inactive but should be enabled; missing.service: not loaded");
    a.fake.makeUnknown("kubelet.service");
    await a.fake.start("containerd.service");
    await a.nextPass();
    expect(a.condition()?.["message"]).toBe("kubelet.service: not loaded; missing.service: not loaded");
  });

  test("reports a unit stuck in activating once the stuck threshold has passed", async () => {
    const a = await agent({
      units: [{ name: "slow.service", activeState: "activating", subState: "start", stateChangeTimestampMs: start - 230_000 }],
      file: lastApplied(`[{name: slow.service, enable: true}]`),
    });
    await eventually("the condition", () => a.condition() !== undefined);
    expect([a.condition()?.["status"], a.condition()?.["reason"], a.condition()?.["message"]]).toEqual(["True", "ProgressingUnits", "slow.service: activating for 3m50s"]);
    await a.nextPass();
    await a.nextPass();
    expect([a.condition()?.["status"], a.condition()?.["reason"], a.condition()?.["message"]]).toEqual(["False", "UnhealthyUnits", "slow.service: stuck in activating for 5m50s"]);
    expect(a.condition()?.["lastTransitionTime"]).toBe("2026-01-01T00:02:00Z");
  });

  test("writes no condition while there is no last-applied OSC, and starts once the file appears", async () => {
    const a = await agent({ units: [{ name: "kubelet.service", activeState: "active", subState: "running" }] });
    await eventually("the requeue timer", () => a.clock.pending() > 0);
    expect(a.condition()).toBeUndefined();
    expect(a.fake.actions).toEqual([]);
    a.writeLastApplied(lastApplied(`[{name: kubelet.service, enable: true}]`));
    a.clock.step(60_000);
    await eventually("the condition", () => a.condition() !== undefined);
    expect(a.condition()?.["reason"]).toBe("AllUnitsHealthy");
  });

  test("fails the pass and writes nothing when the last-applied OSC has no kind", async () => {
    const a = await agent({
      units: [{ name: "kubelet.service", activeState: "active", subState: "running" }],
      file: "apiVersion: extensions.gardener.cloud/v1alpha1\nspec:\n  units: [{name: kubelet.service, enable: true}]\n",
    });
    await eventually("a failed reconcile", () => a.controller.stats().reconcileErrors > 0);
    expect(a.condition()).toBeUndefined();
    expect(a.fake.actions).toEqual([]);
  });

  test("judges units over D-Bus like real systemd, where an unknown unit is listed as inactive (dead)", async () => {
    const a = await agent({
      overDbus: true,
      units: [
        { name: "kubelet.service", activeState: "active", subState: "running" },
        { name: "setup.service", activeState: "inactive", subState: "dead", serviceType: "oneshot" },
        { name: "cleanup.service", activeState: "inactive", subState: "dead", triggeredBy: ["cleanup.timer"] },
        { name: "cleanup.timer", activeState: "active", subState: "waiting" },
        { name: "mount.path", activeState: "inactive", subState: "dead" },
        { name: "slow.service", activeState: "activating", subState: "start", stateChangeTimestampMs: start - 61_000 },
      ],
      file: lastApplied(
        `[{name: kubelet.service, enable: true}, {name: setup.service, content: x}, {name: cleanup.service, content: x}, {name: cleanup.timer, content: x}, {name: mount.path, enable: true}, {name: slow.service, enable: true}, {name: gone.service, enable: true}]`,
      ),
    });
    await eventually("the condition", () => a.condition() !== undefined);
    expect([a.condition()?.["status"], a.condition()?.["reason"], a.condition()?.["message"]]).toEqual([
      "False",
      "UnhealthyUnits",
      "gone.service: inactive but should be enabled; mount.path: inactive but should be enabled",
    ]);
  });
});
