import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../../../kube/index.ts";
import { decodeOsc } from "../../../osc/index.ts";
import { stringify } from "yaml";
import { acceptanceOsc } from "../../../../test/fixtures/osc/acceptance-osc.ts";
import type { OscWorld } from "../../../../test/fixtures/osc/harness.ts";
import { useOscWorlds } from "../../../../test/harness/osc-worlds.ts";
import { admit, hostAlreadyApplied } from "./run.ts";
import { LabelPatch } from "../input/label-patch.ts";
import type { OscControllerDeps } from "../deps.ts";
import { oscPlugins } from "../plugins.ts";
import { gateContext } from "../reconcile.ts";
import type { Osc } from "../../../osc/index.ts";

interface AdmissionInput {
  readonly secret: KubeObject;
  readonly osc: Osc;
  readonly checksum: string;
  readonly node: KubeObject | undefined;
  readonly nodeKnownAtStart: boolean;
  readonly labels: LabelPatch;
}

/** The admit phase of the plugin list, with the context the reconcile builds. */
function admitWith(deps: OscControllerDeps, input: AdmissionInput, signal: AbortSignal) {
  const plugins = oscPlugins(deps);
  const ctx = gateContext(deps, plugins.extensions, { kind: "ok", version: undefined, ...input }, signal);
  return admit(plugins.gates, ctx);
}

const env = useOscWorlds();

/** admit() for the world's current Secret and Node, as the reconcile calls it. */
async function admitWorld(w: OscWorld) {
  const osc = acceptanceOsc();
  const checksum = w.setOsc(osc);
  const secret = env.sim.store.get("secrets", "kube-system", w.secretName) as KubeObject;
  const node = env.sim.store.get("nodes", "", w.nodeName) as KubeObject;
  return admitWith(
    w.deps(),
    { secret, osc: decodeOsc(new TextEncoder().encode(stringify(osc))), checksum, node, nodeKnownAtStart: true, labels: LabelPatch.none },
    AbortSignal.timeout(30_000),
  );
}

describe("admit", () => {
  test("should let a version through with neither lock nor slot when no gate applies", async () => {
    const w = await env.world();
    expect(await admitWorld(w)).toEqual({ kind: "go", reservations: [] });
  });

  test("should hold a version while the Node carries the hold annotation, naming the pending changes", async () => {
    const w = await env.world();
    env.sim.store.patch("nodes", "", w.nodeName, "merge", {
      metadata: { annotations: { "node-agent.gardener.cloud/hold": "kernel upgrade" } },
    });
    const admission = await admitWorld(w);
    expect(admission.kind).toBe("hold");
    if (admission.kind !== "hold") return;
    expect(admission.hold.reason).toBe("Held");
    expect(admission.hold.message).toStartWith("Held by node-agent.gardener.cloud/hold (kernel upgrade); pending operating system config ");
    expect(await w.exists("/example/file")).toBe(false);
  });

  test("should hold a serial version while another node holds the Lease", async () => {
    const w = await env.world();
    w.setOsc(acceptanceOsc());
    env.sim.store.patch("secrets", "kube-system", w.secretName, "merge", {
      metadata: { annotations: { "reconciliation.osc.node-agent.gardener.cloud/serial": "true" } },
    });
    const now = new Date().toISOString().replace("Z", "000Z");
    env.sim.store.create("leases", {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: w.secretName, namespace: "kube-system" },
      spec: { holderIdentity: "other-host", leaseDurationSeconds: 600, acquireTime: now, renewTime: now },
    });
    const secret = env.sim.store.get("secrets", "kube-system", w.secretName) as KubeObject;
    const node = env.sim.store.get("nodes", "", w.nodeName) as KubeObject;
    const osc = decodeOsc(new TextEncoder().encode(stringify(acceptanceOsc())));
    const admission = await admitWith(
      w.deps(),
      { secret, osc, checksum: w.checksum, node, nodeKnownAtStart: true, labels: LabelPatch.none },
      AbortSignal.timeout(30_000),
    );
    expect(admission.kind === "hold" ? admission.hold.reason : admission.kind).toBe("WaitingForSerialLock");
  });

  test("should wait for the label patch before it reads the pending changes of a held version", async () => {
    const w = await env.world();
    env.sim.store.patch("nodes", "", w.nodeName, "merge", { metadata: { annotations: { "node-agent.gardener.cloud/hold": "x" } } });
    const osc = acceptanceOsc();
    const checksum = w.setOsc(osc);
    const secret = env.sim.store.get("secrets", "kube-system", w.secretName) as KubeObject;
    const node = env.sim.store.get("nodes", "", w.nodeName) as KubeObject;
    const patch = Promise.withResolvers<void>();
    const labels = LabelPatch.start(() => patch.promise);
    const admitted = admitWith(
      w.deps(),
      { secret, osc: decodeOsc(new TextEncoder().encode(stringify(osc))), checksum, node, nodeKnownAtStart: true, labels },
      AbortSignal.timeout(30_000),
    );
    patch.reject(new Error("failed patching node labels: refused"));
    await expect(admitted).rejects.toThrow("failed patching node labels: refused");
  });
});

describe("hostAlreadyApplied", () => {
  test.each([
    [[], false],
    [[{}], false],
    [[{ hostAlreadyApplied: false }], false],
    [[{}, { hostAlreadyApplied: true }], true],
  ])("should be as expected for %p", (reservations, want) => {
    expect(hostAlreadyApplied({ kind: "go", reservations })).toBe(want);
  });
});
