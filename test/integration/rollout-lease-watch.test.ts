// Issue 25: a chunked rollout watches no Lease — a waiting node polls the pool's Lease (rollout/poll.ts) — so the
// pool Lease's watch runs only for the serial lock, from the serial gate's first need until it is done. In-process
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

describe("the pool Lease's watch (issue 25)", () => {
  test("a chunked rollout never starts it, from the first look at a checksum to the slot's release", async () => {
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

      // The first look at a checksum pauses before taking; the next takes the slot and applies.
      await w.reconcile(agent);
      await w.reconcile(agent);
      expect(slots()).toEqual([`${slotPrefix}${w.nodeName}`]);

      // Healthy for the whole window (fake time): the slot goes, the checksum lands.
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
      // The slot was read and written with GETs and updates only.
      expect(watch.running()).toBe(false);
      expect([leaseCalls("list"), leaseCalls("watch")]).toEqual([0, 0]);
      expect(leaseCalls("get")).toBeGreaterThan(0);
      expect(env.sim.openWatches("leases")).toBe(watchesBefore);
    } finally {
      lifetime.abort();
    }
  });

  test("the serial gate's watch lists and watches at its first need and stops once it is done", async () => {
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
    const watchesBefore = env.sim.openWatches("leases");
    try {
      expect(watch.running()).toBe(false);
      await watch.start(lifetime.signal);
      await watch.start(lifetime.signal); // idempotent
      expect(watch.running()).toBe(true);
      await eventually("the Lease watch open", () => env.sim.openWatches("leases") === watchesBefore + 1);
      watch.done();
      expect(watch.running()).toBe(false);
      await eventually("the Lease watch closed", () => env.sim.openWatches("leases") === watchesBefore);
    } finally {
      lifetime.abort();
    }
  });
});
