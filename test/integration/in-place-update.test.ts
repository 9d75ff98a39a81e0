// In-place updates (spec osc-controller.md §9.3) of the compiled agent against the API-server simulator
// and the systemd double: the drain gate, the OS update through a real script that rewrites
// <root>/etc/os-release, rollback detection across a "reboot", kubelet minor/CPU-manager updates, CA
// rotation, and a SIGKILL in the middle of an in-place update.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SystemdAction } from "../doubles/systemd/index.ts";
import type { Plain } from "../fixtures/osc/acceptance-osc.ts";
import { startSandbox, type AgentProcess, type Sandbox, type SandboxOptions } from "../harness/sandbox.ts";


const kubeletConfigPath = "/var/lib/kubelet/config/kubelet";
const changesFile = "var/lib/gardener-node-agent/last-computed-osc-changes.yaml";

interface OscOpts {
  readonly os?: string;
  readonly kubelet?: string;
  readonly policy?: string;
  readonly motd?: string;
  readonly caRotation?: string;
  readonly updateScript?: string;
}

/** An in-place pool's OSC: kubelet unit + config file, a plain file, spec/status.inPlaceUpdates. */
function inPlaceOsc(o: OscOpts = {}): string {
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

const poll = async <T>(what: string, f: () => T | undefined | false, timeoutMs = 30_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = f();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
};

interface World {
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
}

const worlds: World[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) {
    await w.sb.stop();
    await rm(w.dir, { recursive: true, force: true });
  }
});

/**
 * A node of an in-place pool that runs Garden Linux 1592.6 and has applied the base OSC. `script`
 * is the OS update: it counts its runs and, when `updates`, writes the version it was given into
 * <root>/etc/os-release.
 */
async function inPlaceWorld(name: string, opts: { updates?: boolean; blockFirstRun?: boolean; sandbox?: SandboxOptions } = {}): Promise<World> {
  const sb = await startSandbox({ nodeName: name, ...opts.sandbox });
  const dir = await mkdtemp(join(tmpdir(), "gna-inplace-"));
  const world: World = {
    sb,
    dir,
    agent: undefined as unknown as AgentProcess,
    runs: () => (existsSync(join(dir, "runs")) ? readFileSync(join(dir, "runs"), "utf8").length : 0),
    node: () => sb.node() as Plain,
    events: (reason) =>
      (sb.sim.store.list("events", { namespace: "default" }) as Plain[]).filter((e) => e["involvedObject"]?.name === name && e["reason"] === reason),
    setReadyForUpdate() {
      const conditions = [...((world.node()["status"]?.["conditions"] as Plain[] | undefined) ?? [])];
      conditions.push({ type: "InPlaceUpdate", status: "True", reason: "ReadyForUpdate", message: "drained", lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, "Z") });
      sb.sim.store.patch("nodes", "", name, "merge", { status: { conditions } }, { subresource: "status" });
    },
    restart() {
      world.agent = sb.spawnAgent();
      return world.agent;
    },
    reboot: (id) => writeFile(join(sb.root, "proc/sys/kernel/random/boot_id"), `${id}\n`),
  };
  worlds.push(world);
  await mkdir(join(sb.root, "etc"), { recursive: true });
  await writeFile(join(sb.root, "etc/os-release"), 'NAME="Garden Linux"\nPRETTY_NAME="Garden Linux 1592.6"\n');
  await mkdir(join(sb.root, "proc/sys/kernel/random"), { recursive: true });
  await world.reboot("boot-1");
  const write = opts.updates === false ? "" : `printf 'NAME="Garden Linux"\\nPRETTY_NAME="Garden Linux %s"\\n' "$1" > '${sb.root}/etc/os-release'\n`;
  // blockFirstRun: the first run records its pid and hangs (the test kills it with the agent).
  const block = opts.blockFirstRun === true ? `if [ ! -f '${dir}/pid' ]; then echo $$ > '${dir}/pid'; exec sleep 60; fi\n` : "";
  await writeFile(join(dir, "update-os"), `#!/bin/sh\nprintf x >> '${dir}/runs'\n${block}${write}echo "updated to $1"\n`);
  await chmod(join(dir, "update-os"), 0o755);
  sb.sim.store.patch("nodes", "", name, "merge", { metadata: { labels: { "worker.gardener.cloud/gardener-node-agent-secret-name": sb.secretName } } });

  const checksum = sb.setOsc(inPlaceOsc());
  world.agent = sb.spawnAgent();
  await sb.waitForApplied(checksum);
  return world;
}

const script = (w: World) => join(w.dir, "update-os");
const restartsOf = (actions: readonly SystemdAction[], unit: string) => actions.filter((a) => a.action === "Restart" && a.units.includes(unit)).length;

function expectSuccessful(w: World): void {
  const meta = w.node()["metadata"];
  expect(meta["labels"]["node.machine.sapcloud.io/update-result"]).toBe("successful");
  expect(meta["annotations"]["node.machine.sapcloud.io/update-failed-reason"]).toBeUndefined();
  expect(meta["annotations"]["node-agent.gardener.cloud/updating-operating-system-version"]).toBeUndefined();
}

function expectFlagsCleared(w: World): void {
  const text = readFileSync(join(w.sb.root, changesFile), "utf8");
  expect(text).toContain("inPlaceUpdates:\n  certificateAuthoritiesRotation:\n    kubelet: false\n    nodeAgent: false\n  kubelet:\n    config: false\n    cpuManagerPolicy: false\n    minorVersion: false\n  operatingSystem: false\n  serviceAccountKeyRotation: false\n");
}

describe("in-place updates of the compiled agent", () => {
  test("holds the update until the node is drained, then updates the OS and reports success", async () => {
    const w = await inPlaceWorld("inplace-os");
    const { sb } = w;
    sb.sim.store.create("pods", { apiVersion: "v1", kind: "Pod", metadata: { name: "ds-pod", namespace: "kube-system" }, spec: { nodeName: "inplace-os", containers: [{ name: "c", image: "i" }] } });
    sb.sim.store.create("pods", { apiVersion: "v1", kind: "Pod", metadata: { name: "other-pod", namespace: "kube-system" }, spec: { nodeName: "elsewhere", containers: [{ name: "c", image: "i" }] } });
    const restartsBefore = restartsOf(sb.systemd.actions, "kubelet.service");

    const checksum = sb.setOsc(inPlaceOsc({ os: "1600.0", motd: "new", updateScript: script(w) }));
    const held = await poll("the WaitingForDrain event", () => w.events("WaitingForDrain")[0]);
    expect(held["type"]).toBe("Normal");
    expect(held["message"]).toBe(
      "In-place update pending (operating system update): waiting for the Node condition InPlaceUpdate with reason ReadyForUpdate (node drained by machine-controller-manager)",
    );
    // Nothing of the change is on the host; the pending flags are in the changes file (upstream format).
    await poll("the reason in the log", () => w.agent.output().includes("WaitingForDrain"));
    expect(await sb.readHostFile("/etc/demo/motd")).toBe("base\n");
    expect(readFileSync(join(sb.root, changesFile), "utf8")).toContain("  operatingSystem: true\n");
    expect(w.runs()).toBe(0);
    expect(restartsOf(sb.systemd.actions, "kubelet.service")).toBe(restartsBefore);
    expect(w.node()["metadata"]["annotations"]["checksum/cloud-config-data"]).not.toBe(checksum);

    w.setReadyForUpdate();
    await sb.waitForApplied(checksum);
    expect(w.runs()).toBe(1);
    expect(await sb.readHostFile("/etc/os-release")).toContain("Garden Linux 1600.0");
    expect(await sb.readHostFile("/etc/demo/motd")).toBe("new\n");
    expectSuccessful(w);
    expectFlagsCleared(w);
    // Deleted (a pod bound to a node is only marked, kubelet finishes it); other nodes' pods stay.
    expect((sb.sim.store.get("pods", "kube-system", "ds-pod") as Plain)["metadata"]["deletionTimestamp"]).toBeDefined();
    expect((sb.sim.store.get("pods", "kube-system", "other-pod") as Plain)["metadata"]["deletionTimestamp"]).toBeUndefined();
    expect(w.events("WaitingForDrain")).toHaveLength(1);
  });

  test("detects a rollback after the reboot, reports it once and never runs the update again", async () => {
    const w = await inPlaceWorld("inplace-rollback", { updates: false });
    const { sb } = w;
    w.setReadyForUpdate();
    const checksum = sb.setOsc(inPlaceOsc({ os: "1600.0", updateScript: script(w) }));

    // The command succeeded but the OS is still the old one: the machine is expected to reboot.
    await poll("the wait for the reboot", () => w.agent.output().includes("stopping reconciliation until gardener-node-agent is restarted after the OS update"));
    expect(w.runs()).toBe(1);
    expect(w.node()["metadata"]["annotations"]["node-agent.gardener.cloud/updating-operating-system-version"]).toBe("1600.0");

    // A restart of the agent alone (same boot) keeps waiting for the reboot: no failure, no second run.
    await w.agent.stop("SIGKILL");
    w.restart();
    await poll("the wait after the agent restart", () => w.agent.output().includes("stopping reconciliation until gardener-node-agent is restarted after the OS update"));
    expect(w.node()["metadata"]["labels"]["node.machine.sapcloud.io/update-result"]).toBeUndefined();
    expect(w.runs()).toBe(1);

    // Reboot: the machine comes back on 1592.6.
    await w.agent.stop("SIGKILL");
    await w.reboot("boot-2");
    w.restart();
    const failed = await poll("the failed label", () => (w.node()["metadata"]["labels"]["node.machine.sapcloud.io/update-result"] === "failed" ? w.node() : undefined));
    const reason: string = failed["metadata"]["annotations"]["node.machine.sapcloud.io/update-failed-reason"];
    expect(reason).toContain("1600.0");
    expect(reason).toContain("1592.6");
    expect(reason).toContain("rollback");
    await poll("the warning event", () => w.events("OSCApplyFailed").find((e) => String(e["message"]).includes("rollback")));
    // Never a loop: a further start reports the same reason and runs nothing.
    await w.agent.stop("SIGKILL");
    w.restart();
    await poll("the second report", () => w.agent.output().includes("failed before, not retrying"));
    expect(w.runs()).toBe(1);
    expect(w.node()["metadata"]["annotations"]["node.machine.sapcloud.io/update-failed-reason"]).toBe(reason);
    expect(w.node()["metadata"]["annotations"]["checksum/cloud-config-data"]).not.toBe(checksum);
  });

  test("updates the kubelet minor version in place and checks its health before clearing the flags", async () => {
    const w = await inPlaceWorld("inplace-kubelet");
    const { sb } = w;
    w.setReadyForUpdate();
    const before = restartsOf(sb.systemd.actions, "kubelet.service");
    const checksum = sb.setOsc(inPlaceOsc({ kubelet: "1.32.0" }));
    await sb.waitForApplied(checksum);
    expect(restartsOf(sb.systemd.actions, "kubelet.service")).toBe(before + 1);
    expect(await sb.readHostFile("/etc/systemd/system/kubelet.service")).toContain("kubelet-1.32.0");
    expect(w.agent.output()).toContain("Checking kubelet health after the in-place kubelet update");
    expectSuccessful(w);
    expectFlagsCleared(w);
  });

  test("removes the CPU manager state before kubelet restarts with a new CPU manager policy", async () => {
    let stateAtRestart: boolean | undefined;
    let root = "";
    const w = await inPlaceWorld("inplace-cpu", {
      sandbox: {
        systemd: {
          onAction: (a) => {
            if (a.action === "Restart" && a.units.includes("kubelet.service") && root !== "") stateAtRestart = existsSync(join(root, "var/lib/kubelet/cpu_manager_state"));
          },
        },
      },
    });
    const { sb } = w;
    await writeFile(join(sb.root, "var/lib/kubelet/cpu_manager_state"), '{"policyName":"none"}');
    root = sb.root;
    w.setReadyForUpdate();
    const checksum = sb.setOsc(inPlaceOsc({ policy: "static" }));
    await sb.waitForApplied(checksum);
    expect(stateAtRestart).toBe(false);
    expect(await sb.readHostFile(kubeletConfigPath)).toContain("cpuManagerPolicy: static");
    expectSuccessful(w);
    expectFlagsCleared(w);
  });

  test("rotates the certificate authorities: new kubelet and agent credentials, then a restart", async () => {
    const w = await inPlaceWorld("inplace-ca");
    const { sb } = w;
    const realKubeconfig = "apiVersion: v1\nkind: Config\nclusters:\n- name: default-cluster\n  cluster:\n    server: https://old\n    certificate-authority: /old/ca.crt\ncontexts:\n- name: default-context\n  context:\n    cluster: default-cluster\n    user: default-auth\ncurrent-context: default-context\nusers:\n- name: default-auth\n  user:\n    client-certificate: /var/lib/kubelet/pki/kubelet-client-current.pem\n    client-key: /var/lib/kubelet/pki/kubelet-client-current.pem\n";
    await mkdir(join(sb.root, "var/lib/kubelet/pki"), { recursive: true });
    await writeFile(join(sb.root, "var/lib/kubelet/kubeconfig-real"), realKubeconfig);
    await writeFile(join(sb.root, "var/lib/kubelet/pki/kubelet-client-current.pem"), "KUBELET-PEM");
    const oldKubeconfig = await sb.readHostFile("/var/lib/gardener-node-agent/credentials/kubeconfig");
    w.setReadyForUpdate();
    const before = restartsOf(sb.systemd.actions, "kubelet.service");
    const checksum = sb.setOsc(inPlaceOsc({ caRotation: "2026-11-24T10:00:00Z" }));

    const csr = await poll("the agent's CSR", () => sb.sim.store.list("certificatesigningrequests")[0]);
    const csrName = (csr["metadata"] as { name: string }).name;
    sb.sim.approveCsr(csrName);
    await sb.sim.signCsr(csrName);
    // The agent restarts itself to use its new certificate (systemd would start it again).
    expect(await w.agent.proc.exited).toBe(0);
    const bootstrap = await sb.readHostFile("/var/lib/kubelet/kubeconfig-bootstrap");
    expect(bootstrap).toContain(`server: ${sb.sim.url}`);
    expect(bootstrap).toContain("certificate-authority: /var/lib/gardener-node-agent/cluster-ca.crt");
    expect(bootstrap).toContain(`client-certificate-data: ${Buffer.from("KUBELET-PEM").toString("base64")}`);
    expect(bootstrap).toContain("current-context: default-context");
    expect(existsSync(join(sb.root, "var/lib/kubelet/kubeconfig-real"))).toBe(false);
    expect(existsSync(join(sb.root, "var/lib/kubelet/pki"))).toBe(false);
    expect(restartsOf(sb.systemd.actions, "kubelet.service")).toBe(before + 1);
    expect(await sb.readHostFile("/var/lib/gardener-node-agent/credentials/kubeconfig")).not.toBe(oldKubeconfig);
    expect(readFileSync(join(sb.root, "var/lib/gardener-node-agent/last-applied-osc.yaml"), "utf8")).toContain("lastInitiationTime: \"2026-11-24T10:00:00Z\"");

    w.restart();
    await sb.waitForApplied(checksum);
    expectSuccessful(w);
    expectFlagsCleared(w);
  });

  test("resumes an in-place kubelet update after a SIGKILL during the kubelet restart", async () => {
    let agentRef: World | undefined;
    let armed = false;
    const w = await inPlaceWorld("inplace-kill", {
      sandbox: {
        systemd: {
          onAction: (a) => {
            if (armed && a.action === "Restart" && a.units.includes("kubelet.service")) {
              armed = false;
              agentRef?.agent.proc.kill("SIGKILL");
            }
          },
        },
      },
    });
    agentRef = w;
    const { sb } = w;
    w.setReadyForUpdate();
    armed = true;
    const checksum = sb.setOsc(inPlaceOsc({ kubelet: "1.32.0", policy: "static" }));
    expect(await w.agent.proc.exited).not.toBe(0);
    expect(readFileSync(join(sb.root, changesFile), "utf8")).toContain("    minorVersion: true\n");

    w.restart();
    await sb.waitForApplied(checksum);
    expectSuccessful(w);
    expectFlagsCleared(w);
    expect(await sb.readHostFile("/etc/systemd/system/kubelet.service")).toContain("kubelet-1.32.0");
  });

  test("runs an OS update command again that was interrupted by a SIGKILL of the agent", async () => {
    const w = await inPlaceWorld("inplace-kill-os", { blockFirstRun: true });
    const { sb } = w;
    w.setReadyForUpdate();
    const checksum = sb.setOsc(inPlaceOsc({ os: "1600.0", updateScript: script(w) }));
    const pid = Number(await poll("the hanging update command", () => (existsSync(join(w.dir, "pid")) ? readFileSync(join(w.dir, "pid"), "utf8").trim() || undefined : undefined)));
    await w.agent.stop("SIGKILL");
    process.kill(pid, "SIGKILL");
    expect(readFileSync(join(sb.root, changesFile), "utf8")).toContain("  operatingSystemUpdate:\n    bootID: boot-1\n    state: running\n");

    w.restart();
    await sb.waitForApplied(checksum);
    expect(w.runs()).toBe(2);
    expect(await sb.readHostFile("/etc/os-release")).toContain("Garden Linux 1600.0");
    expectSuccessful(w);
    expectFlagsCleared(w);
  });
});
