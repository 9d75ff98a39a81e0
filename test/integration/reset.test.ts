// `gardener-node-agent reset` end to end (bootstrap-and-config.md §10, scenario 45): the compiled
// binary in a temp --root, the systemd D-Bus double, Debian's containerd on the root's CRI socket
// with two real pod sandboxes, and a real tmpfs mounted below /var/lib/kubelet.
import { afterEach, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { startContainerd, type Containerd } from "../harness/containerd.ts";
import { agentBinary, agentEnv, binaryVersion } from "../harness/sandbox.ts";
import { startSystemdDouble, type SystemdDouble } from "../doubles/systemd/index.ts";

const lastApplied = `apiVersion: extensions.gardener.cloud/v1alpha1
kind: OperatingSystemConfig
metadata: {}
spec:
  units:
  - name: kubelet.service
    enable: true
    content: "[Service]\\nExecStart=/opt/bin/kubelet\\n"
  - name: gardener-node-agent.service
    enable: true
  - name: my-unit.service
    command: start
  files:
  - path: /etc/my-unit/config
    permissions: 420
    content: {inline: {data: "a=b\\n"}}
  - path: /opt/bin/never-written
    content: {inline: {data: "gone already"}}
status:
  extensionUnits:
  - name: extension.service
  extensionFiles:
  - path: /etc/extension/settings
    content: {inline: {data: "x"}}
`;

const success = "\nThe node has been successfully cleaned from gardener-node-agent artifacts!\n";

interface World {
  root: string;
  systemd: SystemdDouble;
  containerd?: Containerd;
  mounted: string[];
}
let world: World | undefined;
afterEach(async () => {
  if (world === undefined) return;
  for (const m of world.mounted) Bun.spawnSync(["umount", m]);
  await world.containerd?.stop();
  await world.systemd.stop();
  await rm(world.root, { recursive: true, force: true });
  world = undefined;
}, 60_000);

const put = async (root: string, path: string, data: string) => {
  await mkdir(dirname(join(root, path)), { recursive: true });
  await writeFile(join(root, path), data);
};

/** A node as the agent left it: config, credentials, last-applied OSC, its files, kubelet data. */
async function nodeRoot(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "gna-reset-"));
  const version = await binaryVersion();
  await put(
    root,
    `/var/lib/gardener-node-agent/config-${version}.yaml`,
    "controllers:\n  operatingSystemConfig: {secretName: gardener-node-agent-pool, kubernetesVersion: 1.33.0}\nlogFormat: text\n",
  );
  await put(root, "/var/lib/gardener-node-agent/last-applied-osc.yaml", lastApplied);
  await put(root, "/var/lib/gardener-node-agent/credentials/kubeconfig", "kubeconfig");
  await put(root, "/var/lib/gardener-node-agent/machine-name", "machine-a\n");
  await put(root, "/etc/my-unit/config", "a=b\n");
  await put(root, "/etc/extension/settings", "x");
  await put(root, "/etc/keep-me", "not the agent's");
  await put(root, "/var/lib/kubelet/config/kubelet", "kind: KubeletConfiguration\n");
  await put(root, "/var/lib/kubelet/pki/kubelet-client-current.pem", "pem");
  return root;
}

// Asynchronous: the systemd double answers D-Bus calls on this process's event loop.
const runReset = async (w: World) => {
  const proc = Bun.spawn([agentBinary, "reset", "--config-dir=/var/lib/gardener-node-agent", `--root=${w.root}`], {
    env: agentEnv(w.systemd.address, "node-a"),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
};

const unitActions = (s: SystemdDouble) =>
  s.actions.filter((a) => a.action === "Stop" || a.action === "Disable").map((a) => `${a.action} ${a.units.join(",")}`);

test("reset stops the agent, kubelet and every pod sandbox, then the OSC's units, and empties both directories (scenario 45)", async () => {
  const root = await nodeRoot();
  const systemd = await startSystemdDouble();
  world = { root, systemd, mounted: [] };
  const containerd = await startContainerd({ socket: join(root, "var/run/containerd/containerd.sock") });
  world.containerd = containerd;
  await containerd.runPodSandbox("kube-proxy-x", "kube-system");
  await containerd.runPodSandbox("app-y");
  expect(await containerd.listPodSandboxes()).toHaveLength(2);
  // A volume mounted below /var/lib/kubelet: it must be unmounted before the directory is emptied.
  const volume = join(root, "var/lib/kubelet/pods/p1/volumes/kubernetes.io~empty-dir/cache");
  await mkdir(volume, { recursive: true });
  expect(Bun.spawnSync(["mount", "-t", "tmpfs", "tmpfs", volume]).exitCode).toBe(0);
  world.mounted.push(volume);
  await writeFile(join(volume, "on-tmpfs"), "data");

  const out = await runReset(world);
  expect(out.stderr).not.toContain("failed");
  expect(out.code).toBe(0);
  expect(out.stdout.endsWith(success)).toBe(true);

  expect(unitActions(systemd)).toEqual([
    "Stop gardener-node-agent.service",
    "Stop kubelet.service",
    "Stop kubelet.service",
    "Disable kubelet.service",
    "Stop gardener-node-agent.service",
    "Disable gardener-node-agent.service",
    "Stop my-unit.service",
    "Disable my-unit.service",
    "Stop extension.service",
    "Disable extension.service",
  ]);
  expect(await containerd.listPodSandboxes()).toEqual([]);
  expect(existsSync(join(root, "etc/my-unit/config"))).toBe(false);
  expect(existsSync(join(root, "etc/extension/settings"))).toBe(false);
  expect(readFileSync(join(root, "etc/keep-me"), "utf8")).toBe("not the agent's");
  expect(readdirSync(join(root, "var/lib/gardener-node-agent"))).toEqual([]);
  expect(readdirSync(join(root, "var/lib/kubelet"))).toEqual([]);
  expect(readFileSync("/proc/mounts", "utf8")).not.toContain(volume);
  world.mounted = [];
  for (const task of ["Stopping containers", "Cleaning up operating system configuration"]) {
    expect(out.stderr).toContain(`[reset] ${task}: succeeded`);
  }
}, 120_000);

test("reset without a reachable container runtime fails, keeps the node's files and exits 1", async () => {
  const root = await nodeRoot();
  const systemd = await startSystemdDouble();
  world = { root, systemd, mounted: [] };

  const out = await runReset(world);
  expect(out.code).toBe(1);
  expect(out.stdout).not.toContain("successfully cleaned");
  expect(out.stderr).toContain("[reset] Stopping containers: failed (failed connecting to the container runtime: ");
  expect(out.stderr).toContain("[reset] Cleaning up operating system configuration: skipped");
  expect(out.stderr).toContain('error: 1 error occurred: task "Stopping containers" failed: failed connecting to the container runtime');
  expect(unitActions(systemd)).toEqual(["Stop gardener-node-agent.service", "Stop kubelet.service"]);
  expect(existsSync(join(root, "etc/my-unit/config"))).toBe(true);
  expect(existsSync(join(root, "var/lib/gardener-node-agent/last-applied-osc.yaml"))).toBe(true);
  expect(existsSync(join(root, "var/lib/kubelet/config/kubelet"))).toBe(true);
}, 60_000);

test("reset stops at a unit that fails to stop, leaves the directories alone and exits 1", async () => {
  const root = await nodeRoot();
  const systemd = await startSystemdDouble();
  world = { root, systemd, mounted: [] };
  world.containerd = await startContainerd({ socket: join(root, "var/run/containerd/containerd.sock") });
  systemd.failNextJob("extension.service", { operation: "stop" });

  const out = await runReset(world);
  expect(out.code).toBe(1);
  expect(out.stderr).toContain('task "Cleaning up operating system configuration" failed: failed stopping unit extension.service');
  expect(out.stderr).toContain("[reset] Removing gardener-node-agent directory content: skipped");
  expect(existsSync(join(root, "var/lib/gardener-node-agent/last-applied-osc.yaml"))).toBe(true);
}, 60_000);
