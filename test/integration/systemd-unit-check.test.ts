import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setupSystemdUnitCheckController } from "../../src/controllers/systemdunitcheck/index.ts";
import type { KubeClient } from "../../src/kube/client.ts";
import { CachedReader, nodes } from "../../src/kube/index.ts";
import type { Resource } from "../../src/kube/resources.ts";
import type { Kube, KubeObject, PatchType, WriteOptions } from "../../src/kube/types.ts";
import { FakeClock } from "../doubles/fake-clock.ts";
import type { UnitSeed } from "../doubles/systemd/index.ts";
import { quietLog as log, useControllerSandboxes } from "../harness/controller-sandbox.ts";
import { eventually } from "../harness/eventually.ts";

setDefaultTimeout(30_000);
type Plain = Record<string, any>;
const start = Date.UTC(2026, 0, 1, 0, 0, 0);

const env = useControllerSandboxes();

const lastApplied = (units: string, extensionUnits = "[]") => `apiVersion: extensions.gardener.cloud/v1alpha1
kind: OperatingSystemConfig
spec:
  type: debian
  units: ${units}
status:
  extensionUnits: ${extensionUnits}
`;

/** A running systemd-unit-check controller for a fresh Node that carries a kubelet Ready condition. */
async function agent(opts: { units: UnitSeed[]; file?: string; overDbus?: boolean }) {
  const sb = await env.start({
    prefix: "suc",
    clock: new FakeClock(start),
    nodeStatus: {
      conditions: [
        {
          type: "Ready",
          status: "True",
          reason: "KubeletReady",
          message: "kubelet is posting ready status",
          lastHeartbeatTime: "2026-01-01T00:00:00Z",
          lastTransitionTime: "2025-12-01T00:00:00Z",
        },
      ],
    },
    systemd: { units: opts.units, overDbus: opts.overDbus === true },
  });
  const { sim, nodeName, root, clock, fake, kube } = sb;
  const stateDir = join(root, "var/lib/gardener-node-agent");
  mkdirSync(stateDir, { recursive: true });
  const writeLastApplied = (text: string) => writeFileSync(join(stateDir, "last-applied-osc.yaml"), text);
  if (opts.file !== undefined) writeLastApplied(opts.file);

  const sent: Array<{ type: PatchType; body: unknown; subresource: string | undefined }> = [];
  const recording: Kube = Object.assign(Object.create(kube) as KubeClient, {
    patch: <T extends KubeObject>(res: Resource, ns: string, name: string, type: PatchType, body: unknown, o?: WriteOptions) => {
      sent.push({ type, body, subresource: o?.subresource });
      return kube.patch<T>(res, ns, name, type, body, o);
    },
  });
  const controller = setupSystemdUnitCheckController({
    kube: recording,
    informers: sb.informers,
    node: sb.node,
    host: sb.host,
    systemd: sb.systemd,
    clock,
    log,
    config: { syncPeriod: 60_000, stuckThreshold: 300_000 },
  });
  await sb.run(controller);

  const conditions = (): Plain[] => sb.nodeObject()["status"]?.["conditions"] ?? [];
  const condition = (type = "SystemdUnitsReady"): Plain | undefined => conditions().find((c) => c["type"] === type);
  const statusPatches = () => sim.requests.filter((r) => r.resource === "nodes" && r.verb === "patch" && r.name === nodeName);
  const cache = new CachedReader(sb.informers);
  const cachedVersion = async () => (await cache.get<KubeObject>(nodes, "", nodeName).catch(() => undefined))?.metadata.resourceVersion;
  /**
   * The next pass: once the controller waits on its requeue and its cache holds the Node as stored
   * (the pass reads the previous condition from the cache; its watch event can come after the patch's
   * answer), step the clock by the sync period.
   */
  const nextPass = async () => {
    const before = statusPatches().length;
    await eventually("the requeue timer", () => clock.pending() > 0);
    await eventually(
      "the cache to hold the stored Node",
      async () => (await cachedVersion()) === sb.nodeObject()["metadata"]["resourceVersion"],
    );
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
    env.sim.store.patch(
      "nodes",
      "",
      a.nodeName,
      "strategic",
      { status: { conditions: [{ type: "Ready", lastHeartbeatTime: "2026-01-01T00:00:45Z" }] } },
      { subresource: "status" },
    );
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
      file: lastApplied(
        `[{name: kubelet.service, enable: true}, {name: containerd.service, content: x}]`,
        `[{name: b-disabled.service, enable: false}, {name: missing.service, enable: true}]`,
      ),
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
    expect([a.condition()?.["status"], a.condition()?.["reason"], a.condition()?.["message"]]).toEqual([
      "True",
      "ProgressingUnits",
      "slow.service: activating for 3m50s",
    ]);
    await a.nextPass();
    await a.nextPass();
    expect([a.condition()?.["status"], a.condition()?.["reason"], a.condition()?.["message"]]).toEqual([
      "False",
      "UnhealthyUnits",
      "slow.service: stuck in activating for 5m50s",
    ]);
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
