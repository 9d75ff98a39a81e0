// previewGates (what `diff` reports) against the API-server simulator, with a stepped clock: the cases
// the whole-binary suite (diff-gates.test.ts) does not reach — a rollout wait, a verifying slot, serial
// winning over rollout-parallelism, a static pod manifest that is not a Pod, no Node yet.
import { describe, expect, test } from "bun:test";
import type { GatePreview } from "../../src/controllers/operatingsystemconfig/preview/gates.ts";
import { planChangeSet } from "../../src/controllers/operatingsystemconfig/plan/planner.ts";
import { oscExtensions } from "../../src/controllers/operatingsystemconfig/plugins.ts";
import { previewGates } from "../../src/controllers/operatingsystemconfig/preview/gates.ts";
import { defaultRolloutTimings } from "../../src/controllers/operatingsystemconfig/features/rollout/index.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import { decodeOsc } from "../../src/osc/index.ts";
import { FakeClock } from "../doubles/fake-clock.ts";
import type { OscWorld } from "../fixtures/osc/harness.ts";
import { useOscWorlds } from "../harness/osc-worlds.ts";

const env = useOscWorlds();

const start = Date.UTC(2026, 10, 24, 12, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();
const poolLabel = "worker.gardener.cloud/gardener-node-agent-secret-name";

const oscText = (files = "") => `apiVersion: extensions.gardener.cloud/v1alpha1
kind: OperatingSystemConfig
spec:
  files:
  - path: /etc/demo/version
    permissions: 0644
    content: {inline: {data: "v2\\n"}}
${files}`;

async function world(annotations: Record<string, string> = {}): Promise<OscWorld> {
  const w = await env.world();
  env.sim.store.patch("nodes", "", w.nodeName, "merge", { metadata: { labels: { [poolLabel]: w.secretName }, annotations } });
  return w;
}

async function gates(w: OscWorld, text: string, clock: FakeClock, withNode = true): Promise<GatePreview[]> {
  const node = withNode ? (w.node() as KubeObject) : undefined;
  const checksum = w.setOsc(text);
  const osc = decodeOsc(text);
  const { changes } = await planChangeSet(
    w.host,
    { osc, checksum, hostName: w.hostName, processPath: "/usr/bin" },
    oscExtensions({}),
    "look",
  );
  const secret = env.sim.store.get("secrets", "kube-system", w.secretName) as KubeObject;
  const input = {
    host: w.host,
    kube: w.kube,
    node,
    secret,
    osc,
    checksum,
    hostName: w.hostName,
    changes,
    clock,
    rolloutTimings: defaultRolloutTimings,
  };
  return previewGates(input, AbortSignal.timeout(10_000));
}

function putSlots(w: OscWorld, slots: Record<string, unknown>): void {
  const annotations = Object.fromEntries(Object.entries(slots).map(([n, s]) => [`slot.node-agent.gardener.cloud/${n}`, JSON.stringify(s)]));
  env.sim.store.create("leases", {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: { name: w.secretName, namespace: "kube-system", annotations },
    spec: {},
  });
}

function poolNode(w: OscWorld, name: string): void {
  env.sim.store.create("nodes", { apiVersion: "v1", kind: "Node", metadata: { name, labels: { [poolLabel]: w.secretName } } });
}

describe("previewGates", () => {
  test("should name the active node a rollout slot waits behind", async () => {
    const w = await world({ "node-agent.gardener.cloud/rollout-parallelism": "1" });
    const other = `a-${w.id}`;
    poolNode(w, other);
    const checksum = w.setOsc(oscText());
    putSlots(w, { [other]: { checksum, since: iso(start - 5_000), renewed: iso(start - 1_000), state: "applying" } });
    expect(await gates(w, oscText(), new FakeClock(start))).toEqual([
      {
        gate: "rollout",
        verdict: "stops",
        reason: "WaitingForRolloutSlot",
        message: `Waiting for one of 1 rollout slots on Lease kube-system/${w.secretName}, behind ${other}`,
      },
    ]);
  });

  test("should drop the slot of a Node that no longer exists, as the agent does", async () => {
    const w = await world({ "node-agent.gardener.cloud/rollout-parallelism": "1" });
    const checksum = w.setOsc(oscText());
    putSlots(w, { "gone-node": { checksum, since: iso(start), renewed: iso(start), state: "failed" } });
    const [g] = await gates(w, oscText(), new FakeClock(start));
    expect(g).toMatchObject({ gate: "rollout", verdict: "after-apply", reason: "VerifyingRollout" });
    expect(g?.message).toStartWith("Takes one of 1 rollout slots");
  });

  test("should report the verification of a node's own verifying slot until it has been healthy long enough", async () => {
    const w = await world({ "node-agent.gardener.cloud/rollout-parallelism": "2" });
    const checksum = w.setOsc(oscText());
    const verifyingSince = start - 30_000;
    putSlots(w, { [w.nodeName]: { checksum, since: iso(verifyingSince), renewed: iso(start), state: "verifying" } });
    const healthy = (since: number) => ({
      conditions: [
        { type: "Ready", status: "True", lastTransitionTime: iso(since), lastHeartbeatTime: iso(start) },
        { type: "SystemdUnitsReady", status: "True", lastTransitionTime: iso(since), lastHeartbeatTime: iso(start) },
      ],
    });
    env.sim.store.patch("nodes", "", w.nodeName, "merge", { status: healthy(verifyingSince - 600_000) }, { subresource: "status" });
    expect(await gates(w, oscText(), new FakeClock(start))).toEqual([
      {
        gate: "rollout",
        verdict: "after-apply",
        reason: "VerifyingRollout",
        message: "Verifying the node after the change: healthy for 30s of 60s",
      },
    ]);
    expect(await gates(w, oscText(), new FakeClock(verifyingSince + 60_000))).toEqual([]);
  });

  test("should check only the serial lock when the Secret is serial (serial wins over rollout-parallelism)", async () => {
    const w = await world({ "node-agent.gardener.cloud/rollout-parallelism": "1" });
    w.setOsc(oscText());
    env.sim.store.patch("secrets", "kube-system", w.secretName, "merge", {
      metadata: { annotations: { "reconciliation.osc.node-agent.gardener.cloud/serial": "true" } },
    });
    const checksum =
      (env.sim.store.get("secrets", "kube-system", w.secretName) as KubeObject).metadata.annotations?.["checksum/data-script"] ?? "";
    const secret = env.sim.store.get("secrets", "kube-system", w.secretName) as KubeObject;
    const osc = decodeOsc(oscText());
    const { changes } = await planChangeSet(
      w.host,
      { osc, checksum, hostName: w.hostName, processPath: "/usr/bin" },
      oscExtensions({}),
      "look",
    );
    const input = {
      host: w.host,
      kube: w.kube,
      node: w.node() as KubeObject,
      secret,
      osc,
      checksum,
      hostName: w.hostName,
      changes,
      clock: new FakeClock(start),
      rolloutTimings: defaultRolloutTimings,
    };
    // The Lease does not exist: the lock is free and this node would take it.
    expect(await previewGates(input, AbortSignal.timeout(10_000))).toEqual([]);
  });

  test("should say the apply fails after the files are written for a static pod manifest that is not a Pod", async () => {
    const w = await world();
    const files = `  - path: /etc/kubernetes/manifests/bad.yaml
    permissions: 0600
    content: {inline: {data: "apiVersion: v1\\nkind: ConfigMap\\nmetadata: {name: x}\\n"}}
`;
    expect(await gates(w, oscText(files), new FakeClock(start))).toEqual([
      {
        gate: "static-pods",
        verdict: "after-apply",
        reason: "ApplyFailed",
        message: 'static pod manifest "/etc/kubernetes/manifests/bad.yaml": is not a Pod (apiVersion "v1", kind "ConfigMap")',
      },
    ]);
  });

  test("should not check static pods before the Node exists", async () => {
    const w = await world();
    const files = `  - path: /etc/kubernetes/manifests/etcd.yaml
    permissions: 0600
    content: {inline: {data: "apiVersion: v1\\nkind: Pod\\nmetadata: {name: etcd}\\n"}}
`;
    expect(await gates(w, oscText(files), new FakeClock(start), false)).toEqual([
      {
        gate: "static-pods",
        verdict: "not-checked",
        message:
          "not checked (no Node yet): the new config writes /etc/kubernetes/manifests/etcd.yaml; the checksum is recorded only once kubelet runs the mirror pods of the manifests",
      },
    ]);
  });
});
