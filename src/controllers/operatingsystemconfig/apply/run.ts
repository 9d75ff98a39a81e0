import { RestartRequested, type KubeObject } from "../../../kube/index.ts";
import type { Osc } from "../../../osc/index.ts";
import { agentUnitName } from "../constants.ts";
import type { GateContext, GateHold } from "../gates/gate.ts";
import { firstHold } from "../gates/run.ts";
import { type PlannedFiles, planChanges } from "../plan/content.ts";
import { containerdConfigured } from "../plan/merge.ts";
import { disruptionOnce } from "../plan/pending-disruption.ts";
import { type PlannedChanges, planChangeSet } from "../plan/planner.ts";
import { skipsStateFiles } from "../plan/stateless.ts";
import { changesFileWrite, writeChanges, writeLastApplied } from "../plan/state.ts";
import { type ChangeSummary, restartsOnly, summarizeChanges } from "../plan/summary.ts";
import { checkApplyTargets, type DirListings } from "../plan/targets.ts";
import { ChangesStore } from "./changes-store.ts";
import { configureContainerd } from "./containerd/index.ts";
import { step } from "../../../log/index.ts";
import type { StepContext, UnitJobs } from "./context.ts";
import { type ApplyExtension, type ApplyPlugins, armAll } from "./extension.ts";
import { deleteRemovedFiles, writeChangedFiles, writeImageFiles } from "./files.ts";
import type { ApplyPorts } from "./ports.ts";
import { type PendingProbes, removeDeletedRegistries, writeRegistries } from "./registries.ts";
import { removeStaleTemps, writtenDirs } from "./stale-temps.ts";
import { collectAfterBigWrite, collectAfterLargeApply } from "./collect.ts";
import { writeTokensBeforeUnits } from "./token-order.ts";
import { applyChangedUnits, executeUnitCommands, readUnitFiles, removeDeletedUnits } from "./units.ts";

export interface ApplyInput {
  readonly osc: Osc;
  readonly checksum: string;
  /** The Node, when registered (events need it). */
  readonly node: KubeObject | undefined;
  /**
   * Work that must succeed before the host is touched (the Node label patch, §4 step 4): awaited after
   * the read-only planning and before the first write; its failure wins over a planning failure.
   */
  readonly ready?: Promise<unknown>;
  /** Told what the change set holds once it is computed or resumed (history and `status`, report/). */
  readonly onPlanned?: (summary: ChangeSummary) => void;
  /** What the `plan`-phase gates see besides the change set (offline: no Secret, no API server). */
  readonly gateContext?: Pick<GateContext, "secret" | "serial" | "nodeKnownAtStart" | "online">;
}

/** The read-only part of an apply: the work list (computed or resumed) and every file's checked content. */
type ApplyPlan = PlannedChanges & { readonly planned: PlannedFiles; readonly listings: DirListings };

async function planApply(ports: ApplyPorts, hooks: readonly ApplyExtension[], input: ApplyInput, signal: AbortSignal): Promise<ApplyPlan> {
  const { host } = ports;
  const req = { osc: input.osc, checksum: input.checksum, hostName: ports.node.hostName, processPath: ports.processPath };
  const plan = await planChangeSet(host, req, hooks, "apply");
  const { changes } = plan;
  const planned = await step("failed validating operating system config", () =>
    planChanges(ports.kube, changes, ports.arch, signal, ports.staged),
  );
  const listings = await step("failed validating operating system config", () => checkApplyTargets(host, changes));
  return { ...plan, planned, listings };
}

/**
 * Why an apply stopped early without failing: a gate holds it (nothing of the change was applied, or
 * an extension reverted it), or an extension's work met network problems and is tried again later.
 */
export type ApplyStop = { readonly hold: GateHold } | { readonly retryAfterMs: number; readonly why: string };

/**
 * Steps 7–26 of §4, extensions armed around them. Throws RestartRequested when the agent itself changed
 * (step 19); any other failure leaves finished items recorded and last-applied untouched.
 */
export async function applyOsc(
  ports: ApplyPorts,
  plugins: ApplyPlugins,
  input: ApplyInput,
  signal: AbortSignal,
): Promise<ApplyStop | undefined> {
  const armed = await armAll(plugins.extensions, { ports, osc: input.osc, checksum: input.checksum, node: input.node, signal });
  // Each directory the apply checks and writes into is walked once for the whole apply (HostFs.holdPathMemo).
  const releasePaths = armed.ports.host.holdPathMemo();
  let stop: ApplyStop | undefined;
  try {
    stop = await applySteps(armed.ports, plugins, input, signal, armed.unitJobs);
  } finally {
    releasePaths();
  }
  // An apply that stopped early has not finished restarting: nothing to verify yet.
  if (stop !== undefined) return stop;
  const hold = await armed.verify(signal);
  return hold === undefined ? undefined : { hold };
}

async function applySteps(
  ports: ApplyPorts,
  plugins: ApplyPlugins,
  input: ApplyInput,
  signal: AbortSignal,
  unitJobs: UnitJobs | undefined,
): Promise<ApplyStop | undefined> {
  const { host, log, systemd } = ports;
  const withContainerd = containerdConfigured(input.osc);

  // Plan: read state, compute or resume the work list, check every file's content — nothing written yet.
  let plan: ApplyPlan;
  try {
    plan = await planApply(ports, plugins.extensions, input, signal);
  } catch (err) {
    await input.ready;
    throw err;
  }
  await input.ready;
  // The env drop-in is part of the OSC from here on (diff and last-applied), §7.3.
  const { osc, changes, resumed, planned, listings } = plan;
  const summary = restartsOnly(summarizeChanges(changes), unitJobs?.actions(changes));
  input.onPlanned?.(summary);
  collectAfterLargeApply(summary, log, osc);
  log.info(resumed ? "Resuming previously computed changes" : "Computed changes against last applied operating system config", {
    checksum: input.checksum,
  });

  // gardenadm's provision OSC (9.4): the change set lives in memory only, nothing restarts the agent.
  const stateless = skipsStateFiles(ports.selfHosted, osc);
  // The plan-phase gates (the drain gate, step 12), before the containerd config so that nothing at all
  // is written while the node waits but the change set, persisted for the next look.
  const gateContext = input.gateContext ?? { secret: undefined, serial: false, nodeKnownAtStart: false, online: false };
  const base = { ...gateContext, checksum: input.checksum, osc, node: input.node, dryRun: false, signal };
  const planPhase = async () => changes;
  const disruption = disruptionOnce(host, ports.node.hostName.toLowerCase(), osc, planPhase);
  const hold = await firstHold(plugins.gates, "plan", { ...base, changes: planPhase, disruption });
  if (hold !== undefined) {
    if (!stateless) await step("failed persisting changes", () => writeChanges(host, changes));
    return { hold };
  }

  // Temps a killed predecessor left where this apply writes (never fails the apply), alongside the
  // writes: HostFs never removes a temp this process is writing. Directories planning listed are not read again.
  const tokenPaths = ports.config.tokenSyncConfigs.map((s) => s.path);
  const staleTemps = removeStaleTemps(host, writtenDirs(osc, ports.node.hostName.toLowerCase(), tokenPaths), log, listings);

  const store = new ChangesStore(changes, stateless ? async () => {} : (c) => writeChanges(host, c));
  const ctx: StepContext = { ports, store, node: input.node, signal, ...(unitJobs !== undefined ? { unitJobs } : {}) };
  // A disruption policy may leave the daemon-reload out (only files written, no unit changed, no restart).
  const daemonReload = unitJobs?.daemonReload(changes) ?? true;
  // Step 16's reads run alongside steps 13-15 (1.5-5 ms saved for 10 units), unless an OSC file lives
  // under /etc/systemd. A step that fails first waits for the reads to settle.
  const unitFilesRead = changes.files.changed.some((f) => f.path.startsWith("/etc/systemd/")) ? undefined : readUnitFiles(ctx);
  unitFilesRead?.catch(() => undefined); // awaited by the units step
  const failAfterUnitFiles = async (err: unknown): Promise<never> => {
    await unitFilesRead?.catch(() => undefined);
    throw err;
  };
  let probes: PendingProbes;
  try {
    if (withContainerd) {
      log.info("Configuring containerd");
      const cri = input.osc.spec.criConfig;
      if (cri !== undefined) await step("failed configuring containerd", () => configureContainerd(ports, cri, signal));
    }

    if (changes.units.commands.some((c) => c.name === agentUnitName)) {
      await step("failed persisting changes", () => store.persist());
      log.info("Own unit or its files changed, the agent restarts after the daemon-reload");
      await step("failed persisting changes", () => store.setMustRestartNodeAgent(true));
      await step("failed persisting changes", () => store.unitCommandDone(agentUnitName));
      log.info("Applying changed files");
      await step("failed applying changed files", () => writeChangedFiles(ctx, planned, { listings }));
    } else {
      // The computed change set is persisted together with the files (one durability point, files.ts).
      log.info("Applying changed files");
      await step("failed applying changed files", () =>
        store.persistVia((c) => writeChangedFiles(ctx, planned, { listings, changesFile: stateless ? undefined : changesFileWrite(c) })),
      );
    }
    await staleTemps;
    log.info("Applying containerd registries");
    probes = await step("failed applying containerd registries", () => writeRegistries(ctx));
  } catch (err) {
    await staleTemps;
    return failAfterUnitFiles(err);
  }
  try {
    log.info("Applying changed image files");
    await step("failed applying changed image files", () => writeImageFiles(ctx)).catch(failAfterUnitFiles);

    // Steps 16-18. With no unit to remove, the daemon-reload goes right behind enable/disable: systemd
    // answers one connection's calls in order, so it still reloads after linking (one round trip saved).
    let reload: Promise<void> | undefined;
    const sendReload = (): Promise<void> => {
      log.info("Reloading systemd daemon");
      const sent = systemd.daemonReload(signal);
      sent.catch(() => undefined); // awaited below (or settled before a failure is thrown)
      reload = sent;
      return sent;
    };
    log.info("Applying changed units");
    try {
      const early = daemonReload && store.changes.units.deleted.length === 0 ? sendReload : undefined;
      await step("failed applying changed units", () => applyChangedUnits(ctx, { afterEnableSent: early, unitFilesRead }));
    } catch (err) {
      await reload?.catch(() => undefined);
      throw err;
    }

    log.info("Removing deleted units");
    await step("failed removing deleted units", () => removeDeletedUnits(ctx));

    if (daemonReload) {
      const reloaded = reload ?? sendReload();
      await step("failed reloading systemd daemon", () => reloaded);
    } else log.info("Leaving out the systemd daemon-reload: no unit changed and the disruption policy restarts nothing");

    if (store.changes.mustRestartNodeAgent && !stateless) {
      await step("failed persisting changes", () => store.setMustRestartNodeAgent(false));
      log.info("Restarting the agent to activate its new unit or binary");
      throw new RestartRequested("gardener-node-agent unit or one of its files changed");
    }

    log.info("Writing token files the starting units read");
    await step("failed writing token files", () => writeTokensBeforeUnits(ctx, osc));
    for (const e of plugins.extensions) await e.beforeUnitCommands?.(ctx);
    log.info("Executing unit commands");
    await step("failed executing unit commands", () => executeUnitCommands(ctx));
    for (const e of plugins.extensions) await e.afterUnitCommands?.(ctx);

    log.info("Waiting for containerd registries");
    await step("failed configuring containerd registries", () => probes.wait());
  } finally {
    probes.cancel();
  }
  await step("failed removing deleted containerd registries", () => removeDeletedRegistries(ctx));

  log.info("Removing deleted files");
  await step("failed removing deleted files", () => deleteRemovedFiles(ctx));

  // Completions deferred by harmless-to-redo steps, when no later record carried them.
  await step("failed persisting changes", () => store.flush());
  for (const e of plugins.extensions) {
    const retry = await e.finish?.(ctx, osc);
    if (retry !== undefined) return retry;
  }
  if (stateless) {
    log.info("Applied a provision operating system config of a self-hosted machine, state files are not written");
    return undefined;
  }
  // Every file and unit of this OSC is in place: the record of attempted writes (plan/leftovers.ts) is
  // no longer needed, and is dropped with the final write of the changes file.
  if (store.changes.attemptedWrites !== undefined)
    store.defer((c) => {
      delete c.attemptedWrites;
    });
  await step("failed persisting changes", () => store.flush());
  collectAfterLargeApply(summary, log);
  log.info("Persisting current operating system config as last applied");
  const lastAppliedBytes = await step("failed persisting last applied operating system config", () => writeLastApplied(host, osc));
  // Its size, not the change set's: a big OSC re-applied with one file changed writes the whole text too.
  collectAfterBigWrite(lastAppliedBytes, log, "last-applied");

  if (store.changes.mustRestartNodeAgent) {
    await step("failed persisting changes", () => store.setMustRestartNodeAgent(false));
    log.info("Restarting the agent to use its new client certificate");
    throw new RestartRequested("client certificate renewed for the certificate authority rotation");
  }
  return undefined;
}
