// gardenadm mode in the compiled agent (osc-controller.md 9.4, bootstrap-and-config.md §3.4, §11.3):
// on a self-hosted machine (gardenadm's /var/lib/gardenadm exists) the agent watches every pool's OSC
// Secret while its Node does not exist — the simulator's authorizer grants exactly that — and only
// its own Secret by name once the Node exists; the zone label comes from the zone file; a provision
// OSC is applied without state files and without restarting the agent.
import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { eventually } from "../harness/eventually.ts";
import { useSandbox } from "../harness/sandbox-hooks.ts";
import type { Sandbox } from "../harness/sandbox.ts";

const oscFor = (purpose: string, marker: string, secretRef?: string) => `apiVersion: extensions.gardener.cloud/v1alpha1
kind: OperatingSystemConfig
spec:
  purpose: ${purpose}
  files:
  - path: /etc/${marker}
    permissions: 420
    content: {inline: {data: "${marker}\\n"}}
${secretRef === undefined ? "" : `  - path: /etc/from-secret-ref\n    permissions: 384\n    content: {secretRef: {name: ${secretRef}, dataKey: value}}\n`}`;

const startSandbox = useSandbox();

const poolSecret = (name: string, pool: string, osc: string) => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: {
    name,
    namespace: "kube-system",
    annotations: { "checksum/data-script": new Bun.CryptoHasher("sha256").update(osc).digest("hex") },
    labels: { "gardener.cloud/role": "operating-system-config", "worker.gardener.cloud/pool": pool },
  },
  data: { "osc.yaml": Buffer.from(osc).toString("base64") },
});

/** A self-hosted control-plane machine `cp-0` before kubelet registered: no Node, gardenadm's dir, a zone. */
async function selfHostedSandbox(secretName: string): Promise<Sandbox> {
  const sb = await startSandbox({ nodeName: "cp-0", machineName: "cp-0", secretName, createNode: false });
  sb.sim.markSelfHosted("cp-0");
  await mkdir(join(sb.root, "var/lib/gardenadm"), { recursive: true });
  await writeFile(join(sb.root, "var/lib/gardenadm/download.sh"), "#!/bin/bash\n", { mode: 0o755 });
  await writeFile(join(sb.root, "var/lib/gardener-node-agent/zone"), "zone-a\n", { mode: 0o600 });
  return sb;
}

const createNode = (sb: Sandbox, secretName: string) =>
  sb.sim.store.create("nodes", {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name: "cp-0",
      labels: { "kubernetes.io/hostname": "cp-0", "worker.gardener.cloud/gardener-node-agent-secret-name": secretName },
    },
  });

const secretLists = (sb: Sandbox) =>
  sb.sim.requests
    .filter((r) => r.resource === "secrets" && r.verb === "list" && r.user.startsWith("gardener.cloud:node-agent:"))
    .map((r) => `${r.code} ${decodeURIComponent(r.path)}`);

test("a self-hosted machine watches every pool's OSC Secret before its Node exists and only its own afterwards", async () => {
  const secretName = "gardener-node-agent-control-plane";
  const sb = await selfHostedSandbox(secretName);
  const own = poolSecret(secretName, "control-plane", oscFor("reconcile", "control-plane-marker", "cp-file-secret"));
  sb.sim.store.create("secrets", own);
  // Read through the authorizer's "secretRefs of pool-labelled Secrets" rule (no pool label of its own).
  sb.sim.store.create("secrets", {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "cp-file-secret", namespace: "kube-system" },
    data: { value: Buffer.from("from a secret ref").toString("base64") },
  });
  sb.sim.store.create("secrets", poolSecret("gardener-node-agent-workers", "workers", oscFor("reconcile", "worker-marker")));

  const first = sb.spawnAgent();
  await eventually("the own pool's OSC", () => (existsSync(join(sb.root, "etc/control-plane-marker")) ? true : undefined), {
    timeoutMs: 30_000,
  });
  expect(existsSync(join(sb.root, "etc/worker-marker"))).toBe(false);
  expect(await sb.readHostFile("/etc/from-secret-ref")).toBe("from a secret ref");
  expect(secretLists(sb)).toEqual(["200 /api/v1/namespaces/kube-system/secrets?labelSelector=worker.gardener.cloud/pool"]);

  // kubelet registers the Node (named like the machine): the agent restarts onto a name-scoped cache.
  createNode(sb, secretName);
  expect(await first.proc.exited).toBe(0);
  sb.sim.requests.length = 0;
  const second = sb.spawnAgent();
  await sb.waitForApplied(own.metadata.annotations["checksum/data-script"]);
  expect(secretLists(sb)).toEqual([`200 /api/v1/namespaces/kube-system/secrets?fieldSelector=metadata.name=${secretName}`]);
  const labels = (sb.node()?.["metadata"] as { labels: Record<string, string> }).labels;
  expect(labels["topology.kubernetes.io/zone"]).toBe("zone-a");
  expect(existsSync(join(sb.root, "var/lib/gardener-node-agent/last-applied-osc.yaml"))).toBe(true);
  expect(await second.stop()).toBe(0);
}, 90_000);

test("a provision OSC of a self-hosted machine is applied without state files and without a restart", async () => {
  const secretName = "gardener-node-agent-control-plane-init";
  const sb = await selfHostedSandbox(secretName);
  const own = poolSecret(secretName, "control-plane", oscFor("provision", "provision-marker"));
  sb.sim.store.create("secrets", own);

  const agent = sb.spawnAgent();
  await eventually("the provision OSC", () => (existsSync(join(sb.root, "etc/provision-marker")) ? true : undefined), {
    timeoutMs: 30_000,
  });
  createNode(sb, secretName);
  await sb.waitForApplied(own.metadata.annotations["checksum/data-script"]);
  expect(agent.proc.exitCode).toBeNull();
  expect(existsSync(join(sb.root, "var/lib/gardener-node-agent/last-applied-osc.yaml"))).toBe(false);
  expect(existsSync(join(sb.root, "var/lib/gardener-node-agent/last-computed-osc-changes.yaml"))).toBe(false);
  expect((sb.node()?.["metadata"] as { labels: Record<string, string> }).labels["topology.kubernetes.io/zone"]).toBe("zone-a");
  expect(await agent.stop()).toBe(0);
}, 90_000);
