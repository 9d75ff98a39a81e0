import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { setupNodeController } from "../../src/controllers/node/index.ts";
import { nodes } from "../../src/kube/resources.ts";
import type { Systemd } from "../../src/systemd/types.ts";
import type { FakeSystemd } from "../doubles/systemd/index.ts";
import { quietLog as log, useControllerSandboxes, waitForIdleQueue } from "../harness/controller-sandbox.ts";
import { eventually } from "../harness/eventually.ts";

setDefaultTimeout(30_000);
const annotation = "worker.gardener.cloud/restart-systemd-services";

const env = useControllerSandboxes();

/** A running node controller for a fresh Node; every restart records whether the annotation was still on the Node. */
async function agent() {
  const sb = await env.start({ prefix: "node", systemd: { realClock: true } });
  const { sim, nodeName, fake } = sb;
  const restarts: Array<{ unit: string; annotationPresent: boolean }> = [];
  const annotationNow = (): string | undefined => sb.nodeObject()["metadata"]["annotations"]?.[annotation];
  const systemd: Systemd = Object.assign(Object.create(fake) as FakeSystemd, {
    restart: (unit: string, signal?: AbortSignal) => {
      restarts.push({ unit, annotationPresent: annotationNow() !== undefined });
      return fake.restart(unit, signal);
    },
  });
  const { kube, informers, events, clock } = sb;
  const controller = setupNodeController({ kube, informers, node: sb.node, systemd, events, clock, log });
  await sb.run(controller);

  const setAnnotation = (value: string) =>
    sim.store.patch("nodes", "", nodeName, "merge", { metadata: { annotations: { [annotation]: value } } });
  const patches = () => sim.requests.filter((r) => r.resource === "nodes" && r.verb === "patch" && r.name === nodeName);
  /**
   * The cache has caught up with the store (same resourceVersion: every event went through the
   * predicates) and the controller has nothing queued, running or scheduled — nothing more will happen.
   */
  const quiescent = async () => {
    const inf = informers.informersOf(nodes, "")[0];
    const storeRv = () => sb.nodeObject()["metadata"]["resourceVersion"];
    await eventually("the cache to catch up", () => inf?.get(nodeName)?.metadata.resourceVersion === storeRv());
    await waitForIdleQueue(controller.queue, { delayed: true });
  };
  return { nodeName, fake, restarts, annotationNow, setAnnotation, events: sb.nodeEvents, patches, controller, quiescent };
}

describe("node controller", () => {
  test("restarts the listed services, removes the annotation, and restarts the agent itself last", async () => {
    const a = await agent();
    a.setAnnotation("gardener-node-agent,foo.service,bar");
    await eventually("three restarts", () => a.restarts.length === 3);
    expect(a.restarts).toEqual([
      { unit: "foo.service", annotationPresent: true },
      { unit: "bar.service", annotationPresent: true },
      { unit: "gardener-node-agent.service", annotationPresent: false },
    ]);
    expect(a.annotationNow()).toBeUndefined();
    expect(a.patches()).toHaveLength(1);
    await eventually("three events", () => a.events().length === 3);
    expect(a.events().sort()).toEqual([
      "Normal SystemDUnitRestart restart: processed restart of unit bar.service",
      "Normal SystemDUnitRestart restart: processed restart of unit foo.service",
      "Normal SystemDUnitRestart restart: processed restart of unit gardener-node-agent.service",
    ]);
    expect(a.fake.actions).toEqual([
      { action: "Restart", units: ["foo.service"] },
      { action: "Restart", units: ["bar.service"] },
      { action: "Restart", units: ["gardener-node-agent.service"] },
    ]);
  });

  test("refuses an invalid unit name with a Warning event, still restarts the valid ones and removes the annotation", async () => {
    const a = await agent();
    a.setAnnotation("kubelet,foo;reboot,containerd.service");
    await eventually("the annotation to be removed", () => a.annotationNow() === undefined);
    expect(a.restarts.map((r) => r.unit)).toEqual(["kubelet.service", "containerd.service"]);
    await eventually("three events", () => a.events().length === 3);
    expect(a.events()).toContain(
      `Warning SystemDUnitRestart restart: refused restart of unit "foo;reboot.service" on node ${a.nodeName}: invalid systemd unit name in annotation worker.gardener.cloud/restart-systemd-services`,
    );
    // No loop: nothing happens after the removal.
    await a.quiescent();
    expect(a.patches()).toHaveLength(1);
    expect(a.restarts).toHaveLength(2);
  });

  test("does not retry a failed restart: Warning event, annotation removed, no second attempt", async () => {
    const a = await agent();
    a.fake.failNextJob("broken.service");
    a.setAnnotation("broken,ok");
    await eventually("the annotation to be removed", () => a.annotationNow() === undefined);
    await eventually("two events", () => a.events().length === 2);
    expect(a.events().sort()).toEqual([
      "Normal SystemDUnitRestart restart: processed restart of unit ok.service",
      "Warning SystemDUnitRestart restart: processed restart of unit broken.service failed with error restart failed for broken.service, due failed",
    ]);
    await a.quiescent();
    expect(a.restarts.map((r) => r.unit)).toEqual(["broken.service", "ok.service"]);
    expect(a.controller.stats().reconcileErrors).toBe(0);
  });

  test("acts again when the annotation is set again, and ignores its removal", async () => {
    const a = await agent();
    a.setAnnotation("foo");
    await eventually("the first pass", () => a.annotationNow() === undefined && a.restarts.length === 1);
    a.setAnnotation("foo");
    await eventually("the second pass", () => a.annotationNow() === undefined && a.restarts.length === 2);
    await a.quiescent();
    expect(a.patches()).toHaveLength(2);
    expect(a.restarts.map((r) => r.annotationPresent)).toEqual([true, true]);
  });

  test("ignores an empty annotation value", async () => {
    const a = await agent();
    a.setAnnotation("");
    await a.quiescent();
    expect(a.restarts).toEqual([]);
    expect(a.annotationNow()).toBe("");
    expect(a.patches()).toHaveLength(0);
  });
});
