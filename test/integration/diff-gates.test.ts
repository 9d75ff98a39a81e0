// `diff` of the compiled binary names every gate that would hold the apply or its checksum, decided by
// the gates' own functions on what the API server says (read with the node's own credentials): a serial
// lock held by another node, a halted chunked rollout, static pods whose mirror pods run an older
// manifest; offline, the gates that need the API server are "not checked (offline)". diff writes nothing.
import { afterEach, describe, expect, test } from "bun:test";
import { sampleOsc } from "../demo/sample-osc.ts";
import { agentBinary, agentEnv, startSandbox, type Sandbox } from "../harness/sandbox.ts";

const sandboxes: Sandbox[] = [];
afterEach(async () => {
  await Promise.all(sandboxes.splice(0).map((s) => s.stop()));
});

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

interface Gate {
  readonly gate: string;
  readonly verdict: string;
  readonly reason?: string;
  readonly message: string;
}

/** Spawned asynchronously: the simulator answers from this very process. */
async function run(args: string[], env: Record<string, string>): Promise<Run> {
  const p = Bun.spawn([agentBinary, ...args], { env, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr };
}

const poolLabel = "worker.gardener.cloud/gardener-node-agent-secret-name";
const microTime = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");

/** A sandbox whose Node belongs to the pool (the authorizer then lets it read the pool's Lease). */
async function node(name: string): Promise<Sandbox> {
  const sb = await startSandbox({ nodeName: name });
  sandboxes.push(sb);
  sb.sim.store.patch("nodes", "", name, "merge", { metadata: { labels: { [poolLabel]: sb.secretName } } });
  return sb;
}

/** `diff` in text and JSON on the node; both exit 1 (changes), and neither writes to the API server. */
async function diff(sb: Sandbox): Promise<{ text: string; gates: Gate[] }> {
  const env = agentEnv(sb.systemd.address, sb.nodeName);
  const flags = ["--config-dir=/var/lib/gardener-node-agent", `--root=${sb.root}`];
  const seen = sb.sim.requests.length;
  const text = await run(["diff", ...flags], env);
  expect(text.stderr).toBe("");
  expect(text.code).toBe(1);
  const json = await run(["diff", "-o", "json", ...flags], env);
  expect(json.code).toBe(1);
  const writes = sb.sim.requests.slice(seen).filter((r) => r.verb !== "get" && r.verb !== "list");
  expect(writes.map((r) => `${r.verb} ${r.path}`)).toEqual([]);
  return { text: text.stdout, gates: (JSON.parse(json.stdout) as { gates: Gate[] }).gates };
}

describe("diff names the gates", () => {
  test("a serial lock held by another live node: the holder and when its lease ends; an expired one holds nothing", async () => {
    const sb = await node("serial-node");
    sb.setOsc(sampleOsc({ greeting: "serial" }));
    sb.sim.store.patch("secrets", "kube-system", sb.secretName, "merge", {
      metadata: { annotations: { "reconciliation.osc.node-agent.gardener.cloud/serial": "true" } },
    });
    const renewed = Date.now() - 100_000;
    sb.sim.store.create("leases", {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: sb.secretName, namespace: "kube-system" },
      spec: { holderIdentity: "other-node", leaseDurationSeconds: 600, acquireTime: microTime(renewed), renewTime: microTime(renewed) },
    });
    const until = new Date(renewed + 600_000).toISOString().replace(/\.\d{3}Z$/, "Z");
    const message = `Waiting for the serial reconciliation lock (Lease kube-system/${sb.secretName}) held by other-node until ${until}`;

    const held = await diff(sb);
    expect(held.text).toContain(`Gates:\n  serial lock holds the apply (WaitingForSerialLock): ${message}\n`);
    expect(held.gates).toEqual([{ gate: "serial-lock", verdict: "stops", reason: "WaitingForSerialLock", message }]);

    const lease = sb.sim.store.get("leases", "kube-system", sb.secretName) as Record<string, unknown>;
    const expired = Date.now() - 601_000;
    sb.sim.store.update("leases", {
      ...lease,
      spec: { holderIdentity: "other-node", leaseDurationSeconds: 600, acquireTime: microTime(expired), renewTime: microTime(expired) },
    });
    const free = await diff(sb);
    expect(free.text).toContain("Gates: none would hold the apply or its checksum\n");
    expect(free.gates).toEqual([]);
  }, 60_000);

  test("a gate whose Lease the node may not read is reported as not checked, with the API server's answer", async () => {
    const sb = await startSandbox({ nodeName: "unlabelled" });
    sandboxes.push(sb);
    sb.setOsc(sampleOsc({ greeting: "serial" }));
    sb.sim.store.patch("secrets", "kube-system", sb.secretName, "merge", {
      metadata: { annotations: { "reconciliation.osc.node-agent.gardener.cloud/serial": "true" } },
    });
    const { gates } = await diff(sb);
    expect(gates).toHaveLength(1);
    expect(gates[0]).toMatchObject({ gate: "serial-lock", verdict: "not-checked" });
    expect(gates[0]?.message).toStartWith("not checked: ");
    expect(gates[0]?.message).toContain("forbidden");
  }, 60_000);

  test("disruption hooks not yet approved and a running blocking pod: both named, nothing asked or written", async () => {
    const sb = await node("hooks-diff");
    const checksum = sb.setOsc(sampleOsc({ greeting: "hooks" }));
    const c = checksum.slice(0, 12);
    sb.sim.store.patch("nodes", "", sb.nodeName, "merge", {
      metadata: {
        annotations: {
          "node-agent.gardener.cloud/disruption-hooks": "db",
          "hooks.node-agent.gardener.cloud/db": "approved 000000000000",
          "node-agent.gardener.cloud/blocking-pods": "app=db",
        },
      },
    });
    sb.sim.store.create("pods", {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "db-0", namespace: "kube-system", labels: { app: "db" } },
      spec: { nodeName: sb.nodeName, containers: [{ name: "c", image: "db" }] },
    });
    sb.sim.store.patch("pods", "kube-system", "db-0", "merge", { status: { phase: "Running" } }, { subresource: "status" });
    const what = "restarts kubelet.service, greeter.service, containerd.service";
    const approval = `Waiting for approval of the disruptive apply of operating system config ${c} (${what}) from hook db: each answers on its annotation hooks.node-agent.gardener.cloud/<name> with "approved ${c}"`;
    const pods = `Disruptive apply of operating system config ${c} (${what}) waits while a running pod on this node matches node-agent.gardener.cloud/blocking-pods (app=db): kube-system/db-0`;

    const { text, gates } = await diff(sb);
    expect(text).toContain(
      `Gates:\n  approval    holds the apply (WaitingForDisruptionApproval): ${approval}\n  blocking pods holds the apply (WaitingForBlockingPods): ${pods}\n`,
    );
    expect(gates).toEqual([
      { gate: "disruption-hooks", verdict: "stops", reason: "WaitingForDisruptionApproval", message: approval },
      { gate: "blocking-pods", verdict: "stops", reason: "WaitingForBlockingPods", message: pods },
    ]);
    // A dry run asks no hook.
    expect((sb.node()?.["metadata"] as { annotations: Record<string, string> }).annotations["hooks.node-agent.gardener.cloud/db"]).toBe(
      "approved 000000000000",
    );
  }, 60_000);

  test("a halted chunked rollout names the failed nodes; with the slot free, the slot's verification holds the checksum", async () => {
    const sb = await node("r-1");
    sb.sim.store.patch("nodes", "", "r-1", "merge", {
      metadata: { annotations: { "node-agent.gardener.cloud/rollout-parallelism": "1" } },
    });
    sb.sim.store.create("nodes", { apiVersion: "v1", kind: "Node", metadata: { name: "r-0", labels: { [poolLabel]: sb.secretName } } });
    const checksum = sb.setOsc(sampleOsc({ greeting: "chunked" }));
    const now = new Date().toISOString();
    sb.sim.store.create("leases", {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: {
        name: sb.secretName,
        namespace: "kube-system",
        annotations: { "slot.node-agent.gardener.cloud/r-0": JSON.stringify({ checksum, since: now, renewed: now, state: "failed" }) },
      },
      spec: {},
    });
    const message = `Rollout halted: the change failed on (or stopped renewing the slot of) r-0, filling all 1 slots of Lease kube-system/${sb.secretName}; roll out a fixed OSC or remove their slot annotations to resume`;

    const halted = await diff(sb);
    expect(halted.text).toContain(`  rollout     holds the apply (RolloutHalted): ${message}\n`);
    expect(halted.gates).toEqual([{ gate: "rollout", verdict: "stops", reason: "RolloutHalted", message }]);

    // The operator removes the failed slot: this node would take the slot and verify its health.
    const lease = sb.sim.store.get("leases", "kube-system", sb.secretName) as { metadata: Record<string, unknown> };
    sb.sim.store.update("leases", { ...lease, metadata: { ...lease.metadata, annotations: {} } });
    const free = await diff(sb);
    expect(free.gates).toEqual([
      {
        gate: "rollout",
        verdict: "after-apply",
        reason: "VerifyingRollout",
        message: `Takes one of 1 rollout slots on Lease kube-system/${sb.secretName}; after the apply the Node must be Ready with SystemdUnitsReady for 60s before the slot is released and the checksum recorded`,
      },
    ]);
    expect(free.text).toContain("  rollout     holds the checksum after the apply (VerifyingRollout): Takes one of 1 rollout slots");
  }, 60_000);

  test("static pods: the checksum waits for mirror pods running the new manifest; offline the API gates are not checked", async () => {
    const sb = await node("cp-1");
    const manifest =
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: kube-apiserver\n  namespace: kube-system\n  annotations:\n    gardener.cloud/config.mirror: hash-2\nspec:\n  containers:\n  - name: kube-apiserver\n    image: example.org/kube-apiserver:v1.33.1\n";
    const osc = `${sampleOsc({ greeting: "static" })}  - path: /etc/kubernetes/manifests/kube-apiserver.yaml\n    permissions: 0600\n    content:\n      inline:\n        encoding: b64\n        data: ${Buffer.from(manifest).toString("base64")}\n`;
    sb.setOsc(osc);
    // kubelet runs the previous manifest (hash-1), Running and Ready.
    sb.sim.store.create("pods", {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: "kube-apiserver-cp-1",
        namespace: "kube-system",
        labels: { "static-pod": "true" },
        annotations: { "gardener.cloud/config.mirror": "hash-1" },
      },
      spec: { nodeName: "cp-1", containers: [{ name: "kube-apiserver", image: "example.org/kube-apiserver:v1.33.0" }] },
    });
    sb.sim.store.patch(
      "pods",
      "kube-system",
      "kube-apiserver-cp-1",
      "merge",
      { status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }] } },
      { subresource: "status" },
    );
    const path = "/etc/kubernetes/manifests/kube-apiserver.yaml";
    const message = `Waiting for static pods: static pod kube-apiserver does not run the current manifest yet (the new config writes ${path}; the checksum waits for their mirror pods)`;

    const online = await diff(sb);
    expect(online.text).toContain(`  static pods holds the checksum after the apply (WaitingForStaticPods): ${message}\n`);
    expect(online.gates).toEqual([{ gate: "static-pods", verdict: "after-apply", reason: "WaitingForStaticPods", message }]);

    const file = sb.besideRoot("static.yaml");
    await Bun.write(file, osc);
    const env = { PATH: process.env["PATH"] ?? "" };
    const offline = await run(["diff", "--offline", `--root=${sb.root}`, file], env);
    expect(offline.code).toBe(1);
    expect(offline.stdout).toContain(
      [
        "Gates:",
        "  hold        not checked (offline)",
        "  window      not checked (offline)",
        "  approval    not checked (offline)",
        "  blocking pods not checked (offline)",
        "  serial lock not checked (offline)",
        "  rollout     not checked (offline)",
        `  static pods not checked (offline): the new config writes ${path}; the checksum is recorded only once kubelet runs the mirror pods of the manifests`,
      ].join("\n"),
    );
    const json = JSON.parse((await run(["diff", "--offline", "-o", "json", `--root=${sb.root}`, file], env)).stdout) as { gates: Gate[] };
    expect(json.gates.map((g) => `${g.gate} ${g.verdict}`)).toEqual([
      "hold not-checked",
      "maintenance-window not-checked",
      "disruption-hooks not-checked",
      "blocking-pods not-checked",
      "serial-lock not-checked",
      "rollout not-checked",
      "static-pods not-checked",
    ]);
  }, 60_000);
});
