// Whole-binary in-place update worlds (spec osc-controller.md §9.3): a sandboxed node of an in-place
// pool on Garden Linux 1592.6 with a real OS update script under a temp dir that rewrites
// <root>/etc/os-release, a boot id under the root (so a test can "reboot"), and the base OSC applied.
import { afterEach, expect } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SystemdAction } from "../doubles/systemd/index.ts";
import type { Plain } from "../fixtures/osc/acceptance-osc.ts";
import { eventually } from "./eventually.ts";
import { startSandbox, type AgentProcess, type Sandbox, type SandboxOptions } from "./sandbox.ts";

export const kubeletConfigPath = "/var/lib/kubelet/config/kubelet";
export const changesFile = "var/lib/gardener-node-agent/last-computed-osc-changes.yaml";
export const lastAppliedFile = "var/lib/gardener-node-agent/last-applied-osc.yaml";

export interface OscOpts {
  readonly os?: string;
  readonly kubelet?: string;
  readonly policy?: string;
  readonly motd?: string;
  readonly caRotation?: string;
  readonly updateScript?: string;
}

/** An in-place pool's OSC: kubelet unit + config file, a plain file, spec/status.inPlaceUpdates. */
export function inPlaceOsc(o: OscOpts = {}): string {
  const kubelet = o.kubelet ?? "1.31.2";
  const config = `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncpuManagerPolicy: ${o.policy ?? "none"}\nkubeReserved:\n  cpu: 80m\n  memory: 1Gi\nevictionHard:\n  memory.available: 100Mi\n`;
  return JSON.stringify({
    apiVersion: "extensions.gardener.cloud/v1alpha1",
    kind: "OperatingSystemConfig",
    spec: {
      units: [{ name: "kubelet.service", content: `[Service]\nExecStart=/opt/bin/kubelet-${kubelet}\n`, filePaths: [kubeletConfigPath] }],
      files: [
        { path: kubeletConfigPath, permissions: 384, content: { inline: { data: config } } },
        { path: "/etc/demo/motd", permissions: 420, content: { inline: { data: `${o.motd ?? "base"}\n` } } },
      ],
      inPlaceUpdates: {
        operatingSystemVersion: o.os ?? "1592.6",
        kubelet,
        ...(o.caRotation !== undefined ? { credentialsRotation: { certificateAuthorities: { lastInitiationTime: o.caRotation } } } : {}),
      },
    },
    status: o.updateScript === undefined ? {} : { inPlaceUpdates: { osUpdate: { command: o.updateScript, args: [o.os ?? "1592.6"] } } },
  });
}

export interface World {
  readonly sb: Sandbox;
  readonly dir: string;
  agent: AgentProcess;
  /** How often the OS update script ran. */
  runs(): number;
  node(): Plain;
  events(reason: string): Plain[];
  setReadyForUpdate(): void;
  restart(): AgentProcess;
  /** A new boot id under the root, as after a reboot. */
  reboot(id: string): Promise<void>;
  /** What a wipe-based OS update (Garden Linux) does at its reboot: both state files and the OSC's /etc file go. */
  wipe(): Promise<void>;
}

const worlds: World[] = [];
/** Registers the cleanup of every world a test file creates. */
export function cleanUpWorldsAfterEach(): void {
  afterEach(async () => {
    for (const w of worlds.splice(0)) {
      await w.sb.stop();
      await rm(w.dir, { recursive: true, force: true });
    }
  });
}

/**
 * A node of an in-place pool that runs Garden Linux 1592.6 and has applied the base OSC. `script`
 * is the OS update: it counts its runs and, when `updates`, writes the version it was given into
 * <root>/etc/os-release.
 */
export async function inPlaceWorld(
  name: string,
  opts: { updates?: boolean; blockFirstRun?: boolean; keepsChanges?: boolean; sandbox?: SandboxOptions } = {},
): Promise<World> {
  const sb = await startSandbox({ nodeName: name, ...opts.sandbox });
  const dir = await mkdtemp(join(tmpdir(), "gna-inplace-"));
  const world: World = {
    sb,
    dir,
    agent: undefined as unknown as AgentProcess,
    runs: () => (existsSync(join(dir, "runs")) ? readFileSync(join(dir, "runs"), "utf8").length : 0),
    node: () => sb.node() as Plain,
    events: (reason) =>
      (sb.sim.store.list("events", { namespace: "default" }) as Plain[]).filter(
        (e) => e["involvedObject"]?.name === name && e["reason"] === reason,
      ),
    setReadyForUpdate() {
      const conditions = [...((world.node()["status"]?.["conditions"] as Plain[] | undefined) ?? [])];
      conditions.push({
        type: "InPlaceUpdate",
        status: "True",
        reason: "ReadyForUpdate",
        message: "drained",
        lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
      });
      sb.sim.store.patch("nodes", "", name, "merge", { status: { conditions } }, { subresource: "status" });
    },
    restart() {
      world.agent = sb.spawnAgent();
      return world.agent;
    },
    reboot: (id) => writeFile(join(sb.root, "proc/sys/kernel/random/boot_id"), `${id}\n`),
    async wipe() {
      for (const f of [changesFile, lastAppliedFile, "etc/demo/motd"]) await rm(join(sb.root, f), { force: true });
    },
  };
  worlds.push(world);
  await mkdir(join(sb.root, "etc"), { recursive: true });
  await writeFile(join(sb.root, "etc/os-release"), 'NAME="Garden Linux"\nPRETTY_NAME="Garden Linux 1592.6"\n');
  await mkdir(join(sb.root, "proc/sys/kernel/random"), { recursive: true });
  await world.reboot("boot-1");
  const write =
    opts.updates === false ? "" : `printf 'NAME="Garden Linux"\\nPRETTY_NAME="Garden Linux %s"\\n' "$1" > '${sb.root}/etc/os-release'\n`;
  // blockFirstRun: the first run records its pid and hangs (the test kills it with the agent).
  const block = opts.blockFirstRun === true ? `if [ ! -f '${dir}/pid' ]; then echo $$ > '${dir}/pid'; exec sleep 60; fi\n` : "";
  // keepsChanges: the script keeps what the changes file said when it ran (in <dir>/changes-at-update).
  const keep =
    opts.keepsChanges === true
      ? `cp '${sb.root}/var/lib/gardener-node-agent/last-computed-osc-changes.yaml' '${dir}/changes-at-update'\n`
      : "";
  await writeFile(join(dir, "update-os"), `#!/bin/sh\nprintf x >> '${dir}/runs'\n${block}${keep}${write}echo "updated to $1"\n`);
  await chmod(join(dir, "update-os"), 0o755);
  sb.sim.store.patch("nodes", "", name, "merge", {
    metadata: { labels: { "worker.gardener.cloud/gardener-node-agent-secret-name": sb.secretName } },
  });

  const checksum = sb.setOsc(inPlaceOsc());
  world.agent = sb.spawnAgent();
  await sb.waitForApplied(checksum);
  return world;
}

export const script = (w: World) => join(w.dir, "update-os");

/** kubelet's kubeconfig and client certificate as a CA rotation finds them; returns the agent's kubeconfig before it. */
export async function prepareCaRotation(sb: Sandbox): Promise<string> {
  const realKubeconfig =
    "apiVersion: v1\nkind: Config\nclusters:\n- name: default-cluster\n  cluster:\n    server: https://old\n    certificate-authority: /old/ca.crt\ncontexts:\n- name: default-context\n  context:\n    cluster: default-cluster\n    user: default-auth\ncurrent-context: default-context\nusers:\n- name: default-auth\n  user:\n    client-certificate: /var/lib/kubelet/pki/kubelet-client-current.pem\n    client-key: /var/lib/kubelet/pki/kubelet-client-current.pem\n";
  await mkdir(join(sb.root, "var/lib/kubelet/pki"), { recursive: true });
  await writeFile(join(sb.root, "var/lib/kubelet/kubeconfig-real"), realKubeconfig);
  await writeFile(join(sb.root, "var/lib/kubelet/pki/kubelet-client-current.pem"), "KUBELET-PEM");
  return sb.readHostFile("/var/lib/gardener-node-agent/credentials/kubeconfig");
}

/** Approves and signs the agent's CSR once it is there (no signer runs in the simulator); returns its name. */
export async function signAgentCsr(sb: Sandbox): Promise<string> {
  const csr = await eventually("the agent's CSR", () => sb.sim.store.list("certificatesigningrequests")[0], { timeoutMs: 30_000 });
  const csrName = (csr["metadata"] as { name: string }).name;
  sb.sim.approveCsr(csrName);
  await sb.sim.signCsr(csrName);
  return csrName;
}
export const restartsOf = (actions: readonly SystemdAction[], unit: string) =>
  actions.filter((a) => a.action === "Restart" && a.units.includes(unit)).length;

export function expectSuccessful(w: World): void {
  const meta = w.node()["metadata"];
  expect(meta["labels"]["node.machine.sapcloud.io/update-result"]).toBe("successful");
  expect(meta["annotations"]["node.machine.sapcloud.io/update-failed-reason"]).toBeUndefined();
  expect(meta["annotations"]["node-agent.gardener.cloud/updating-operating-system-version"]).toBeUndefined();
}

export function expectFlagsCleared(w: World): void {
  const text = readFileSync(join(w.sb.root, changesFile), "utf8");
  expect(text).toContain(
    "inPlaceUpdates:\n  certificateAuthoritiesRotation:\n    kubelet: false\n    nodeAgent: false\n  kubelet:\n    config: false\n    cpuManagerPolicy: false\n    minorVersion: false\n  operatingSystem: false\n  serviceAccountKeyRotation: false\n",
  );
}
