import { patchNodeMetadata, TerminalError, type KubeObject } from "../../../../kube/index.ts";
import type { Osc } from "../../../../osc/index.ts";
import type { StepContext } from "../../apply/context.ts";
import { type InPlaceDeps, timingOf } from "./deps.ts";
import { annotation, markFailed, updateFailedReasonAnnotation, updateResultLabel, updatingOsVersionAnnotation } from "./node.ts";
import { osVersionsEqual, readOsVersion } from "./os-version.ts";
import { inPlaceSpecOf, osUpdateOf } from "../../plan/inplace-spec.ts";
import { errorText } from "../../../../log/index.ts";

/** Network problems are retried for a while and then every 10 minutes (§2.4, §9.3). */
const networkRetryRequeueMs = 10 * 60 * 1000;
const maxReasonChars = 1024;
const reportTimeoutMs = 10_000;

class OsUpdateError extends Error {
  override readonly name = "OsUpdateError";
}

type Classification = "network" | "fatal";
/** §9.3: `network problems` is retriable; `invalid arguments`, `system failure` and anything else are not. */
const classifyOsUpdateOutput = (output: string): Classification => (/network problems/i.test(output) ? "network" : "fatal");

const tail = (s: string): string => (s.length <= maxReasonChars ? s.trim() : `…${s.slice(-maxReasonChars).trim()}`);

const bootIdPath = "/proc/sys/kernel/random/boot_id";

/** This boot's id (under the root, so a sandbox can "reboot"); "" when unknown. */
async function readBootId(ctx: StepContext): Promise<string> {
  return ((await ctx.ports.host.readText(bootIdPath)) ?? "").trim();
}

type Resume = "run" | "wait-for-reboot";

/**
 * §9.3 step 1: an update was started but the OS is not there. Same boot (our record): the agent only
 * restarted, so the command resumes, waits for its reboot or stays failed. After a reboot (or with no
 * record): a rollback, reported once and never retried.
 */
async function detectRollback(ctx: StepContext, node: KubeObject, desired: string, current: string): Promise<Resume> {
  const started = annotation(node, updatingOsVersionAnnotation);
  if (started === undefined || started !== desired || !ctx.store.changes.inPlaceUpdates.operatingSystem) return "run";
  const record = ctx.store.changes.inPlaceUpdates.operatingSystemUpdate;
  const boot = await readBootId(ctx);
  const existing = annotation(node, updateFailedReasonAnnotation);
  if (record !== undefined && record !== null && boot !== "" && record.bootID === boot) {
    if (record.state === "running") {
      ctx.ports.log.info("The operating system update command was interrupted, running it again", { version: desired });
      return "run";
    }
    if (record.state === "succeeded") return "wait-for-reboot";
  }
  if (existing !== undefined && existing !== "") {
    throw new TerminalError(`operating system update to ${desired} failed before, not retrying: ${existing}`);
  }
  const reason = `operating system update to version ${desired} was started but the node runs version ${current}: suspected rollback of the OS update`;
  await markFailed(ctx.ports.kube, node, reason, ctx.signal);
  throw new TerminalError(reason);
}

const waitForReboot = (after: string, desired: string): TerminalError =>
  new TerminalError(
    `stopping reconciliation until gardener-node-agent is restarted after the OS update (running ${after}, updated to ${desired})`,
  );

const recordUpdate = (ctx: StepContext, bootID: string, state: "running" | "succeeded" | "failed" | undefined): Promise<void> =>
  ctx.store.update((c) => {
    c.inPlaceUpdates.operatingSystemUpdate = state === undefined ? undefined : { bootID, state };
  });

const deadlineExceeded = (signal: AbortSignal): boolean => signal.reason instanceof DOMException && signal.reason.name === "TimeoutError";

/**
 * The command was killed with the reconcile. By the 3-minute deadline it failed (running it again would
 * only be killed again); by a shutdown there is no verdict and the record stays "running", so the next
 * start runs it again.
 */
function interrupted(signal: AbortSignal): { ok: false; kind: Classification; output: string } {
  if (deadlineExceeded(signal))
    return { ok: false, kind: "fatal", output: "the update command did not finish within the reconcile deadline (3m)" };
  throw signal.reason;
}

/** Runs the update command; retries network problems every interval within the window. */
async function runUpdateCommand(
  ctx: StepContext,
  inPlace: InPlaceDeps,
  argv: readonly string[],
): Promise<{ ok: true } | { ok: false; kind: Classification; output: string }> {
  const { clock, log } = ctx.ports;
  const timing = timingOf(inPlace);
  const giveUpAt = clock.now() + timing.osUpdateRetryWindowMs;
  for (let attempt = 1; ; attempt++) {
    log.info("Running operating system update command", { command: argv[0], attempt });
    let out;
    try {
      out = await inPlace.runCommand(argv, ctx.signal);
    } catch (err) {
      if (ctx.signal.aborted) return interrupted(ctx.signal);
      // The command could not be started at all (missing, not executable): no retry helps.
      return { ok: false, kind: "fatal", output: errorText(err) };
    }
    if (ctx.signal.aborted) return interrupted(ctx.signal);
    if (out.code === 0) return { ok: true };
    const kind = classifyOsUpdateOutput(out.output);
    log.info("Operating system update command failed", { exitCode: out.code, retriable: kind === "network", output: tail(out.output) });
    if (kind !== "network" || clock.now() + timing.osUpdateRetryIntervalMs > giveUpAt) return { ok: false, kind, output: out.output };
    await clock.sleep(timing.osUpdateRetryIntervalMs, ctx.signal);
  }
}

/** §9.3 steps 1–2: rollback detection, then the OS update; a requeue delay on network problems, TerminalError to reboot or on failure. */
export async function updateOperatingSystem(
  ctx: StepContext,
  inPlace: InPlaceDeps,
  osc: Osc,
  node: KubeObject,
): Promise<{ requeueAfterMs?: number }> {
  const { kube, host, log } = ctx.ports;
  const desired = inPlaceSpecOf(osc)?.operatingSystemVersion ?? "";
  if (!ctx.store.changes.inPlaceUpdates.operatingSystem) return {};
  const current = await readOsVersion(host);
  if ((await detectRollback(ctx, node, desired, current)) === "wait-for-reboot") throw waitForReboot(current, desired);

  const update = osUpdateOf(osc);
  if (update === undefined || update.command === "")
    throw new OsUpdateError("status.inPlaceUpdates.osUpdate.command is required for the operating system update");
  if (desired === "") throw new OsUpdateError("spec.inPlaceUpdates.operatingSystemVersion is required for the operating system update");

  log.info("Updating operating system in place", { from: current, to: desired });
  const boot = await readBootId(ctx);
  await recordUpdate(ctx, boot, "running");
  await patchNodeMetadata(kube, node, { annotations: { [updatingOsVersionAnnotation]: desired } }, ctx.signal);
  const res = await runUpdateCommand(ctx, inPlace, [update.command, ...update.args]);
  if (!res.ok) {
    await recordUpdate(ctx, boot, res.kind === "network" ? undefined : "failed");
    // After our own deadline the failure is still reported, under a short deadline of its own.
    const report = ctx.signal.aborted ? AbortSignal.timeout(reportTimeoutMs) : ctx.signal;
    if (res.kind === "network") {
      const reason = `retriable error detected while updating the operating system to ${desired} (network problems), retrying in 10m: ${tail(res.output)}`;
      // The annotation goes: the next attempt is a retry of a command that never got through, not a rollback.
      const annotations = { [updateFailedReasonAnnotation]: reason, [updatingOsVersionAnnotation]: null };
      await patchNodeMetadata(kube, node, { labels: { [updateResultLabel]: "failed" }, annotations }, report);
      log.info("Operating system update hit network problems, retrying later", { requeueAfterMs: networkRetryRequeueMs });
      return { requeueAfterMs: networkRetryRequeueMs };
    }
    const reason = `non-retriable error detected while updating the operating system to ${desired}: ${tail(res.output)}`;
    await markFailed(kube, node, reason, report);
    throw new TerminalError(reason);
  }

  const after = await readOsVersion(host);
  if (!osVersionsEqual(after, desired)) {
    await recordUpdate(ctx, boot, "succeeded");
    log.info("Operating system update command succeeded, waiting for the restart into the new version", { current: after, desired });
    throw waitForReboot(after, desired);
  }
  log.info("Operating system updated", { version: after });
  await ctx.store.update((c) => {
    c.inPlaceUpdates.operatingSystem = false;
    c.inPlaceUpdates.operatingSystemUpdate = undefined;
  });
  return {};
}
