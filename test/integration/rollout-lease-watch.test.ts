// Issue 25: the pool Lease's watch runs only while a gate of this node needs it. A node whose checksum is
// on its Node (slot released) stops watching the Lease — with hundreds of nodes, every Lease write reached
// every agent — and a new checksum lists and watches it again before the next slot look. In-process
// reconciles against the API-server simulator, the rollout's time on a fake clock.
import { describe, expect, test } from "bun:test";
import type { Plain } from "../fixtures/osc/acceptance-osc.ts";
import { silentLog } from "../fixtures/osc/harness.ts";
import { FakeClock } from "../doubles/fake-clock.ts";
import { eventually } from "../harness/eventually.ts";
import { useOscWorlds } from "../harness/osc-worlds.ts";
import { liveReader } from "../../src/kube/index.ts";
import { serialLeaseWatch } from "../../src/controllers/operatingsystemconfig/index.ts";
import { defaultRolloutTimings as timings } from "../../src/controllers/operatingsystemconfig/features/rollout/index.ts";

const env = useOscWorlds();
const slotPrefix = "slot.node-agent.gardener.cloud/";
const iso = (ms: number) => new Date(ms).toISOString();

const osc = (data: string): Plain => ({
  apiVersion: "extensions.gardener.cloud/v1alpha1",
  kind: "OperatingSystemConfig",
  spec: {
    files: [{ path: "/etc/demo/hello", permissions: 0o644, content: { inline: { data } } }],
    units: [{ name: "demo.service", content: "[Service]\nExecStart=/bin/true\n", filePaths: ["/etc/demo/hello"] }],
  },
});

describe("the pool Lease's watch of a done node (issue 25)", () => {
  test("stops once the node's checksum is on its Node, and a new checksum lists and watches the Lease again", async () => {
    const w = await env.world();
    const clock = new FakeClock(Date.now());
    const lifetime = new AbortController();
    const watch = serialLeaseWatch({
      kube: w.kube,
      cache: liveReader(w.kube),
      clock,
      log: silentLog,
      secretName: w.secretName,
      hostName: w.hostName.toLowerCase(),
      nodeName: w.nodeName,
      signal: lifetime.signal,
    });
    const agent = { rollout: { timings }, serialLeaseWatch: watch, clock };
    const leaseCalls = (verb: string) =>
      env.sim.requests.filter((r) => r.resource === "leases" && r.verb === verb && r.path.includes(w.secretName)).length;
    const slots = () =>
      Object.keys((env.sim.store.get("leases", "kube-system", w.secretName) as Plain)["metadata"].annotations ?? {}).filter((k) =>
        k.startsWith(slotPrefix),
      );
    const nodeChecksum = () => w.node()["metadata"]?.annotations?.["checksum/cloud-config-data"];
    const watchesBefore = env.sim.openWatches("leases");
    try {
      const first = w.setOsc(osc("one"));
      env.sim.store.patch("nodes", "", w.nodeName, "merge", {
        metadata: { annotations: { "node-agent.gardener.cloud/rollout-parallelism": "1" } },
      });
      env.sim.store.create("leases", {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name: w.secretName, namespace: "kube-system" },
        spec: {},
      });

      // The first look at a checksum pauses before taking: the watch runs from here on.
      await w.reconcile(agent);
      expect(watch.running()).toBe(true);
      expect(watch.lease()?.lease?.metadata.name).toBe(w.secretName);
      expect([leaseCalls("list"), leaseCalls("watch")]).toEqual([1, 1]);
      await eventually("the Lease watch open", () => env.sim.openWatches("leases") === watchesBefore + 1);

      // Takes the slot and applies; verifying keeps the watch.
      await w.reconcile(agent);
      expect(slots()).toEqual([`${slotPrefix}${w.nodeName}`]);
      expect(watch.running()).toBe(true);

      // Healthy for the whole window (fake time): the slot goes, the checksum lands, the watch stops.
      const since = clock.now();
      const healthy = { status: "True", lastTransitionTime: iso(since), lastHeartbeatTime: iso(since) };
      env.sim.store.patch(
        "nodes",
        "",
        w.nodeName,
        "merge",
        {
          status: {
            conditions: [
              { ...healthy, type: "Ready" },
              { ...healthy, type: "SystemdUnitsReady" },
            ],
          },
        },
        { subresource: "status" },
      );
      clock.step(timings.healthyForMs);
      await w.reconcile(agent);
      expect(nodeChecksum()).toBe(first);
      expect(slots()).toEqual([]);
      expect(watch.running()).toBe(false);
      expect(watch.lease()).toBeUndefined();
      await eventually("the Lease watch closed", () => env.sim.openWatches("leases") === watchesBefore);

      // A Lease write while stopped reaches nobody; a new checksum starts the watch from a fresh list.
      env.sim.store.patch("leases", "kube-system", w.secretName, "merge", { metadata: { annotations: { "demo/while-stopped": "yes" } } });
      w.setOsc(osc("two"));
      await w.reconcile(agent);
      expect(watch.running()).toBe(true);
      expect([leaseCalls("list"), leaseCalls("watch")]).toEqual([2, 2]);
      expect(watch.lease()?.lease?.metadata.annotations?.["demo/while-stopped"]).toBe("yes");
      await eventually("the Lease watch open again", () => env.sim.openWatches("leases") === watchesBefore + 1);
      env.sim.store.patch("leases", "kube-system", w.secretName, "merge", { metadata: { annotations: { "demo/after": "yes" } } });
      await eventually("the watch's copy following the Lease", () => watch.lease()?.lease?.metadata.annotations?.["demo/after"] === "yes");
    } finally {
      lifetime.abort();
    }
  });

  test("a watch the serial gate also needs keeps running until both gates are done", async () => {
    const w = await env.world();
    const lifetime = new AbortController();
    const watch = serialLeaseWatch({
      kube: w.kube,
      cache: liveReader(w.kube),
      clock: new FakeClock(Date.now()),
      log: silentLog,
      secretName: w.secretName,
      hostName: w.hostName.toLowerCase(),
      nodeName: w.nodeName,
      signal: lifetime.signal,
    });
    try {
      await watch.start(lifetime.signal, "serial");
      await watch.start(lifetime.signal, "rollout");
      watch.done("rollout");
      expect(watch.running()).toBe(true);
      watch.done("serial");
      expect(watch.running()).toBe(false);
    } finally {
      lifetime.abort();
    }
  });
});
