// First boot of the compiled agent, as on a fresh VM: only a bootstrap token → CSR (approved and
// signed by the test, standing in for gardener-resource-manager) → client-certificate kubeconfig →
// the OSC is applied before kubelet registered the Node → the Node appears → the agent exits 0 to
// restart → the next start heartbeats, deletes the bootstrap credentials and annotates the Node.
import { expect, test } from "bun:test";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { eventually } from "../harness/eventually.ts";
import { useSandbox } from "../harness/sandbox-hooks.ts";

const osc = `apiVersion: extensions.gardener.cloud/v1alpha1
kind: OperatingSystemConfig
spec:
  units:
  - name: kubelet.service
    content: "[Service]\\nExecStart=/opt/bin/kubelet\\n"
  files:
  - path: /var/lib/kubelet/config/kubelet
    permissions: 384
    content: {inline: {data: "kind: KubeletConfiguration\\n"}}
`;

const startSandbox = useSandbox();

test("a fresh node joins with its bootstrap token, applies the OSC, restarts once the Node exists and cleans up", async () => {
  const sb = await startSandbox({ nodeName: "fresh-node", createNode: false, credentials: "bootstrap-token" });
  const state = (p: string) => join(sb.root, "var/lib/gardener-node-agent", p);
  const checksum = sb.setOsc(osc);
  const first = sb.spawnAgent();

  const csr = await eventually("the CSR", () => sb.sim.store.list("certificatesigningrequests")[0], { timeoutMs: 30_000 });
  const csrName = (csr["metadata"] as { name: string }).name;
  expect(csrName).toStartWith("node-agent-csr-");
  const spec = csr["spec"] as { signerName: string; usages: string[]; expirationSeconds: number; username: string };
  expect(spec.signerName).toBe("kubernetes.io/kube-apiserver-client");
  expect(spec.usages).toEqual(["digital signature", "key encipherment", "client auth"]);
  expect(spec.expirationSeconds).toBe(2592000);
  expect(spec.username).toStartWith("system:bootstrap:");
  sb.sim.approveCsr(csrName);
  await sb.sim.signCsr(csrName);

  // No Node yet: the whole OSC is applied, the bootstrap credentials stay.
  await eventually("last-applied-osc.yaml", () => (existsSync(state("last-applied-osc.yaml")) ? true : undefined), { timeoutMs: 30_000 });
  expect(statSync(state("credentials/kubeconfig")).mode & 0o777).toBe(0o600);
  expect(await sb.readHostFile("/var/lib/gardener-node-agent/credentials/kubeconfig")).toContain(
    "certificate-authority: /var/lib/gardener-node-agent/cluster-ca.crt",
  );
  expect(statSync(join(sb.root, "var/lib/kubelet/kubeconfig-bootstrap")).mode & 0o777).toBe(0o600);
  expect(await sb.readHostFile("/var/lib/kubelet/config/kubelet")).toBe("kind: KubeletConfiguration\n");
  expect(existsSync(state("credentials/bootstrap-token"))).toBe(true);
  expect(sb.sim.store.get("leases", "kube-system", "gardener-node-agent-fresh-node")).toBeUndefined();

  // kubelet registers the Node: the agent notices it and exits 0 so systemd restarts it.
  sb.sim.store.create("nodes", {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name: "fresh-node", labels: { "kubernetes.io/hostname": "fresh-node" } },
  });
  expect(await first.proc.exited).toBe(0);

  const second = sb.spawnAgent();
  await sb.waitForApplied(checksum);
  await eventually("the Lease", () => sb.sim.store.get("leases", "kube-system", "gardener-node-agent-fresh-node"), { timeoutMs: 30_000 });
  expect(existsSync(state("credentials/bootstrap-token"))).toBe(false);
  expect(existsSync(join(sb.root, "var/lib/kubelet/kubeconfig-bootstrap"))).toBe(false);
  // The OSC was applied before the restart: the second run restarts nothing.
  expect(sb.systemd.actions.filter((a) => a.action === "Restart").map((a) => a.units[0])).toEqual([
    "kubelet.service",
    "containerd.service",
  ]);
  expect(sb.sim.store.list("certificatesigningrequests")).toHaveLength(1);
  await second.stop();
}, 60_000);
