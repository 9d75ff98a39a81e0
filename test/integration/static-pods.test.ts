// Static pod convergence (osc-controller spec 9.1) with the compiled agent: the checksum annotation
// waits until kubelet — played here by the test, through the simulator — runs the manifest's mirror
// pod with the same config hash, Running and Ready.
import { describe, expect, test } from "bun:test";
import { useSandbox } from "../harness/sandbox-hooks.ts";
import { eventually } from "../harness/eventually.ts";

const manifest = `apiVersion: v1
kind: Pod
metadata:
  name: kube-apiserver
  namespace: kube-system
  annotations:
    gardener.cloud/config.mirror: hash-1
spec:
  containers:
  - name: kube-apiserver
    image: example.org/kube-apiserver:v1.33.0
`;
const b64 = (s: string) => Buffer.from(s).toString("base64");
const osc = `apiVersion: extensions.gardener.cloud/v1alpha1
kind: OperatingSystemConfig
spec:
  files:
  - path: /etc/kubernetes/manifests/kube-apiserver.yaml
    permissions: 0600
    content: {inline: {encoding: b64, data: ${b64(manifest)}}}
  - path: /etc/kubernetes/manifests/elsewhere.yaml
    hostName: some-other-hostname
    content: {inline: {data: "{"}}
`;

const startSandbox = useSandbox();

describe("static pods", () => {
  test("the checksum waits for a Running and Ready mirror pod with the manifest's hash", async () => {
    const sb = await startSandbox({ nodeName: "cp-1" });
    const sum = sb.setOsc(osc);
    const agent = sb.spawnAgent();
    const podLists = () => sb.sim.requests.filter((r) => r.resource === "pods" && r.verb === "list" && r.code === 200).length;
    const nodeEvents = (reason: string) =>
      sb.sim.store
        .list("events", { namespace: "default" })
        .filter((e) => e["reason"] === reason && (e["involvedObject"] as { name?: string }).name === "cp-1");
    const checksum = () =>
      (sb.node()?.["metadata"] as { annotations?: Record<string, string> }).annotations?.["checksum/cloud-config-data"];

    // Pending: the files are written, the agent looks for the mirror pod and waits.
    await eventually("a look at the mirror pods", () => podLists() >= 1, { timeoutMs: 30_000, intervalMs: 50 });
    expect(await sb.readHostFile("/etc/kubernetes/manifests/kube-apiserver.yaml")).toBe(manifest);
    expect(await sb.readHostFile("/etc/kubernetes/manifests/elsewhere.yaml").catch(() => "absent")).toBe("absent");
    await eventually("the WaitingForStaticPods event", () => nodeEvents("WaitingForStaticPods").length === 1, { intervalMs: 50 });
    expect(nodeEvents("WaitingForStaticPods")[0]?.["type"]).toBe("Normal");
    const condition = () =>
      ((sb.node()?.["status"] as { conditions?: { type: string; status: string; reason: string }[] }).conditions ?? []).find(
        (c) => c.type === "OperatingSystemConfigApplied",
      );
    await eventually("the condition says why", () => condition()?.reason === "WaitingForStaticPods", { intervalMs: 50 });
    expect(condition()?.status).toBe("False");
    expect(checksum()).toBeUndefined();
    expect(agent.output()).toContain("static pod kube-apiserver has no mirror pod yet");

    // kubelet creates the mirror pod: Pending first.
    sb.sim.store.create("pods", {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: "kube-apiserver-cp-1",
        namespace: "kube-system",
        labels: { "static-pod": "true" },
        annotations: { "gardener.cloud/config.mirror": "hash-1", "kubernetes.io/config.mirror": "hash-1" },
      },
      spec: { nodeName: "cp-1", containers: [{ name: "kube-apiserver", image: "example.org/kube-apiserver:v1.33.0" }] },
    });
    const setStatus = (phase: string, ready: boolean) =>
      sb.sim.store.patch(
        "pods",
        "kube-system",
        "kube-apiserver-cp-1",
        "merge",
        { status: { phase, conditions: [{ type: "Ready", status: ready ? "True" : "False" }] } },
        { subresource: "status" },
      );
    setStatus("Pending", false);
    let seen = podLists();
    await eventually("a look at the Pending mirror pod", () => podLists() > seen, { timeoutMs: 30_000, intervalMs: 50 });
    await eventually("the agent logging the Pending pod", () => agent.output().includes("static pod kube-apiserver is Pending"), {
      intervalMs: 50,
    });
    expect(checksum()).toBeUndefined();

    setStatus("Running", false);
    seen = podLists();
    await eventually("a look at the unready mirror pod", () => podLists() > seen, { timeoutMs: 30_000, intervalMs: 50 });
    await eventually("the agent logging the unready pod", () => agent.output().includes("static pod kube-apiserver is not Ready"), {
      intervalMs: 50,
    });
    expect(checksum()).toBeUndefined();

    setStatus("Running", true);
    await sb.waitForApplied(sum, 30_000);
    await eventually("the condition says applied", () => condition()?.reason === "Applied", { intervalMs: 50 });
    // One event however often it looked.
    expect(nodeEvents("WaitingForStaticPods")).toHaveLength(1);
    expect(nodeEvents("OSCApplied")).toHaveLength(1);
    expect((sb.node()?.["metadata"] as { labels: Record<string, string> }).labels["node-role.kubernetes.io/control-plane"]).toBe("");
  }, 120_000);

  test("a manifest that is not a Pod fails the reconcile with a Warning event and no checksum", async () => {
    const sb = await startSandbox({ nodeName: "cp-2" });
    sb.setOsc(osc.replace(b64(manifest), b64("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")));
    sb.spawnAgent();
    const warnings = () =>
      sb.sim.store.list("events", { namespace: "default" }).filter((e) => e["reason"] === "OSCApplyFailed" && e["type"] === "Warning");
    await eventually("the OSCApplyFailed warning", () => warnings().length >= 1, { timeoutMs: 30_000, intervalMs: 50 });
    expect(warnings()[0]?.["message"]).toBe(
      'failed checking static pods: static pod manifest "/etc/kubernetes/manifests/kube-apiserver.yaml": is not a Pod (apiVersion "v1", kind "ConfigMap")',
    );
    expect(
      (sb.node()?.["metadata"] as { annotations?: Record<string, string> }).annotations?.["checksum/cloud-config-data"],
    ).toBeUndefined();
  }, 60_000);
});
