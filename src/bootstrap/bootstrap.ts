import type { HostFs } from "../host/index.ts";
import type { Logger } from "../log/index.ts";
import type { Systemd } from "../systemd/index.ts";
import { prepareKubeletDataDevice } from "./data-device.ts";
import { agentUnitName, agentUnitPath, initUnitName, kubeletDir, tempDir } from "./paths.ts";
import type { ConnectivityProbe } from "./probe.ts";
import type { CommandRunner } from "./runner.ts";
import { agentUnitContent } from "./unit.ts";
import { errorText, StepError } from "../log/index.ts";

/** The part of NodeAgentConfiguration that `bootstrap` reads (structurally satisfied by the decoded config). */
export interface BootstrapConfig {
  readonly bootstrap?: { readonly kubeletDataVolumeSize?: number | undefined } | undefined;
}

export interface BootstrapDeps {
  readonly host: HostFs;
  readonly systemd: Systemd;
  readonly log: Logger;
  readonly runner: CommandRunner;
  readonly probe: ConnectivityProbe;
  /** Where the WARNING lines of a failed probe go (stdout of the process). */
  readonly stdout: { write(text: string): void };
}

/** A bootstrap step failed: `task` is its short name, the message `<what>: <cause>`, `cause` the original error. */
class BootstrapError extends StepError {
  override readonly name = "BootstrapError";
  constructor(
    readonly task: string,
    what: string,
    cause: unknown,
  ) {
    super(what, cause);
  }
}

async function step<T>(task: string, what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw new BootstrapError(task, what, err);
  }
}

/**
 * The `bootstrap` sub-command (spec §6.1): install, enable and start gardener-node-agent.service,
 * hand over from gardener-node-init.service, then check API-server reachability (never fatal).
 * Running it again on a bootstrapped node rewrites the identical unit file (same bytes, same mode)
 * and repeats the idempotent systemd calls; an existing KUBEDEV filesystem is left alone.
 */
export async function bootstrap(deps: BootstrapDeps, config: BootstrapConfig, signal: AbortSignal): Promise<void> {
  const { host, systemd, log } = deps;

  log.info("Creating temp directory", { path: tempDir });
  // Upstream creates it without permission bits (0000); 0700 is equally root-only and traversable by tools.
  await step("temp-dir", "failed creating temp directory", () => host.ensureDir(tempDir, 0o700));

  const size = config.bootstrap?.kubeletDataVolumeSize;
  if (size !== undefined) {
    log.info("Formatting kubelet data volume", { sizeBytes: size });
    await step("data-volume", "failed formatting kubelet data volume", async () => {
      await host.ensureDir(kubeletDir);
      await prepareKubeletDataDevice(deps, size, signal);
    });
  }

  log.info("Writing unit file", { path: agentUnitPath });
  await step("unit-file", "failed writing unit file", () => host.writeFileAtomic(agentUnitPath, agentUnitContent, 0o644));

  log.info("Reloading systemd daemon");
  await step("daemon-reload", "failed reloading systemd daemon", () => systemd.daemonReload(signal));

  log.info("Enabling unit", { unitName: agentUnitName });
  await step("enable", `failed enabling unit ${agentUnitName}`, () => systemd.enable([agentUnitName], signal));

  log.info("Starting unit", { unitName: agentUnitName });
  await step("start", `failed starting unit ${agentUnitName}`, () => systemd.start(agentUnitName, signal));

  log.info("Disabling unit", { unitName: initUnitName });
  await step("disable", `failed disabling unit ${initUnitName}`, () => systemd.disable([initUnitName], signal));

  log.info("Testing API server connectivity");
  try {
    await deps.probe(signal);
    log.info("API server connectivity test succeeded");
  } catch (err) {
    // Never fatal (spec §6.4): the agent retries on its own; the warning helps whoever reads the console.
    log.error("API server connectivity test failed", { err });
    deps.stdout.write(
      `WARNING: API server connectivity test failed: ${errorText(err)}\n` +
        "Node may fail to join the cluster - check network configuration and API server endpoint\n",
    );
  }
  log.info("Bootstrap finished");
}
