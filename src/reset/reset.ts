import type { CriRuntime } from "../cri/index.ts";
import type { HostFs, Mounts } from "../host/index.ts";
import type { Logger } from "../log/index.ts";
import { decodeOsc } from "../osc/index.ts";
import type { Systemd } from "../systemd/index.ts";
import { runTasks, type Task, type TaskReporter } from "./tasks.ts";
import { errorText, StepError, step } from "../log/index.ts";

const agentUnit = "gardener-node-agent.service";
const kubeletUnit = "kubelet.service";
const stateDir = "/var/lib/gardener-node-agent";
const kubeletDir = "/var/lib/kubelet";
const lastAppliedPath = `${stateDir}/last-applied-osc.yaml`;
/** Attempts per sandbox for stop and for remove (upstream: 5). */
const sandboxAttempts = 5;
export const successMessage = "The node has been successfully cleaned from gardener-node-agent artifacts!";

export interface ResetDeps {
  readonly host: HostFs;
  readonly systemd: Systemd;
  /** Connects to the CRI runtime service on containerd's socket (every call bounded by 2 s). */
  readonly connectCri: (signal: AbortSignal) => Promise<CriRuntime>;
  /** Real mount points (not under the root) and umount(2). */
  readonly mounts: Mounts;
  readonly log: Logger;
  readonly reporter: TaskReporter;
}

const wrap = async (what: string, fn: () => Promise<unknown>): Promise<void> => {
  await step(what, fn);
};

/** Upstream retries at once; each call is already bounded by the CRI client's 2 s timeout. */
async function attempt(what: string, fn: () => Promise<void>): Promise<void> {
  let last: unknown;
  for (let i = 0; i < sandboxAttempts; i++) {
    try {
      return await fn();
    } catch (err) {
      last = err;
    }
  }
  throw new Error(`${what} failed after ${sandboxAttempts} attempts: ${errorText(last)}`, { cause: last });
}

/** Step 1: the agent and kubelet stop, then every pod sandbox is stopped and removed through the CRI. */
async function stopContainers(deps: ResetDeps, signal: AbortSignal): Promise<void> {
  const { systemd, log } = deps;
  for (const unit of [agentUnit, kubeletUnit]) {
    log.info("Stopping unit", { unitName: unit });
    await wrap(`failed stopping unit ${unit}`, () => systemd.stop(unit, signal));
  }
  let cri: CriRuntime;
  try {
    cri = await deps.connectCri(signal);
  } catch (err) {
    throw new StepError("failed connecting to the container runtime", err);
  }
  try {
    const sandboxes = await cri.listPodSandboxes({ signal }).catch((err: unknown) => {
      throw new StepError("failed listing pod sandboxes", err);
    });
    const failures: string[] = [];
    for (const sb of sandboxes) {
      log.info("Stopping and removing pod sandbox", { podSandboxID: sb.id, pod: `${sb.namespace}/${sb.name}` });
      try {
        await attempt(`stopping pod sandbox ${sb.id}`, () => cri.stopPodSandbox(sb.id, { signal }));
        await attempt(`removing pod sandbox ${sb.id}`, () => cri.removePodSandbox(sb.id, { signal }));
      } catch (err) {
        failures.push(errorText(err));
      }
    }
    if (failures.length > 0) throw new Error(failures.join("; "));
  } finally {
    cri.close();
  }
}

/** Step 2: every unit of the last-applied OSC stops and is disabled; its files are removed. */
async function cleanUpOsc(deps: ResetDeps, signal: AbortSignal): Promise<void> {
  const { host, systemd, log } = deps;
  const text = await host.readText(lastAppliedPath);
  if (text === undefined) {
    log.info("No last applied OperatingSystemConfig, nothing to clean up", { path: lastAppliedPath });
    return;
  }
  let osc;
  try {
    osc = decodeOsc(text);
  } catch (err) {
    throw new StepError(`failed decoding ${lastAppliedPath}`, err);
  }
  for (const unit of [...(osc.spec.units ?? []), ...(osc.status.extensionUnits ?? [])]) {
    log.info("Stopping and disabling unit", { unitName: unit.name });
    await wrap(`failed stopping unit ${unit.name}`, () => systemd.stop(unit.name, signal));
    await wrap(`failed disabling unit ${unit.name}`, () => systemd.disable([unit.name], signal));
  }
  for (const file of [...(osc.spec.files ?? []), ...(osc.status.extensionFiles ?? [])]) {
    log.info("Removing file", { path: file.path });
    await wrap(`failed removing file ${file.path}`, () => host.remove(file.path));
  }
}

/** Removes every entry inside `dir` (the directory itself stays). */
async function emptyDir(host: HostFs, dir: string): Promise<void> {
  const entries = (await host.list(dir)) ?? [];
  for (const name of entries) await wrap(`failed removing ${dir}/${name}`, () => host.removeAll(`${dir}/${name}`));
}

/** Step 3b: unmount everything below /var/lib/kubelet (deepest first), then empty it. */
async function cleanUpKubeletDir(deps: ResetDeps): Promise<void> {
  const { host, mounts, log } = deps;
  const prefix = `${host.resolve(kubeletDir).replace(/\/+$/, "")}/`;
  const below = (await mounts.list()).filter((m) => m.startsWith(prefix));
  // Deepest first, so a mount on top of another one is gone before the one beneath it.
  below.sort((a, b) => b.split("/").length - a.split("/").length);
  for (const mountPoint of below) {
    log.info("Unmounting", { path: mountPoint });
    await mounts.unmount(mountPoint);
  }
  await emptyDir(host, kubeletDir);
}

/**
 * `gardener-node-agent reset` (bootstrap-and-config.md §10): the task graph — stop containers →
 * clean up the OSC → (empty the agent's dir ‖ unmount below and empty the kubelet dir). Errors
 * are aggregated (TaskGraphError); a failed task skips the ones after it.
 */
export async function resetNode(deps: ResetDeps, signal: AbortSignal): Promise<void> {
  const tasks: Task[] = [
    { name: "Stopping containers", dependsOn: [], run: (s) => stopContainers(deps, s) },
    { name: "Cleaning up operating system configuration", dependsOn: ["Stopping containers"], run: (s) => cleanUpOsc(deps, s) },
    {
      name: "Removing gardener-node-agent directory content",
      dependsOn: ["Cleaning up operating system configuration"],
      run: () => emptyDir(deps.host, stateDir),
    },
    {
      name: "Unmounting and removing kubelet directory content",
      dependsOn: ["Cleaning up operating system configuration"],
      run: () => cleanUpKubeletDir(deps),
    },
  ];
  await runTasks(tasks, deps.reporter, signal);
}
