import { TerminalError } from "../../../kube/reconcile.ts";
import type { KubeObject } from "../../../kube/types.ts";
import type { Osc } from "../../../osc/index.ts";
import type { ApplyContext } from "../context.ts";
import type { InPlaceDeps } from "./deps.ts";
import { timingOf } from "./deps.ts";
import { annotation, markFailed, patchNode, updateFailedReasonAnnotation, updatingOsVersionAnnotation } from "./node.ts";
import { osVersionsEqual, readOsVersion } from "./os-version.ts";
import { inPlaceSpecOf, osUpdateOf } from "./spec.ts";

/** Network problems are retried for a while and then every 10 minutes (§2.4, §9.3). */
export const networkRetryRequeueMs = 10 * 60 * 1000;
const maxReasonChars = 1024;

export class OsUpdateError extends Error {
  override readonly name = "OsUpdateError";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

type Classification = "network" | "fatal";
/** §9.3: `network problems` is retriable; `invalid arguments`, `system failure` and anything else are not. */
export const classifyOsUpdateOutput = (output: string): Classification => (/network problems/i.test(output) ? "network" : "fatal");

const tail = (s: string): string => (s.length <= maxReasonChars ? s.trim() : `…${s.slice(-maxReasonChars).trim()}`);

/**
 * §9.3 step 1: the Node says an update to the desired version was started, the flag says the OS is
 * still not there — the machine came back on the old version (rollback) or the update failed before.
 * Reported once (an existing reason is kept) and never retried: the agent does not loop on it.
 */
export async function detectRollback(ctx: ApplyContext, node: KubeObject, desired: string, current: string): Promise<void> {
  const started = annotation(node, updatingOsVersionAnnotation);
  if (started === undefined || started !== desired || !ctx.store.changes.inPlaceUpdates.operatingSystem) return;
  const existing = annotation(node, updateFailedReasonAnnotation);
  if (existing !== undefined && existing !== "") {
    throw new TerminalError(`operating system update to ${desired} failed before, not retrying: ${existing}`);
  }
  const reason = `operating system update to version ${desired} was started but the node runs version ${current}: suspected rollback of the OS update`;
  await markFailed(ctx.deps.kube, node, reason, ctx.signal);
  throw new TerminalError(reason);
}

/** Runs the update command; retries network problems every interval within the window. */
async function runUpdateCommand(ctx: ApplyContext, inPlace: InPlaceDeps, argv: readonly string[]): Promise<{ ok: true } | { ok: false; kind: Classification; output: string }> {
  const { clock, log } = ctx.deps;
  const timing = timingOf(inPlace);
  const giveUpAt = clock.now() + timing.osUpdateRetryWindowMs;
  for (let attempt = 1; ; attempt++) {
    log.info("Running operating system update command", { command: argv[0], attempt });
    let out;
    try {
      out = await inPlace.runCommand(argv, ctx.signal);
    } catch (err) {
      // The command could not be started at all (missing, not executable): no retry helps.
      return { ok: false, kind: "fatal", output: err instanceof Error ? err.message : String(err) };
    }
    if (out.code === 0) return { ok: true };
    const kind = classifyOsUpdateOutput(out.output);
    log.info("Operating system update command failed", { exitCode: out.code, retriable: kind === "network", output: tail(out.output) });
    if (kind !== "network" || clock.now() + timing.osUpdateRetryIntervalMs > giveUpAt) return { ok: false, kind, output: out.output };
    await clock.sleep(timing.osUpdateRetryIntervalMs, ctx.signal);
  }
}

/**
 * §9.3 steps 1–2 (flag `operatingSystem`): rollback detection, then the OS update command. Returns a
 * requeue delay when network problems persisted; throws TerminalError when the machine must reboot
 * into the new OS (or the update failed for good).
 */
export async function updateOperatingSystem(ctx: ApplyContext, inPlace: InPlaceDeps, osc: Osc, node: KubeObject): Promise<{ requeueAfterMs?: number }> {
  const { kube, host, log } = ctx.deps;
  const desired = inPlaceSpecOf(osc)?.operatingSystemVersion ?? "";
  const current = await readOsVersion(host);
  await detectRollback(ctx, node, desired, current);
  if (!ctx.store.changes.inPlaceUpdates.operatingSystem) return {};

  const update = osUpdateOf(osc);
  if (update === undefined || update.command === "") throw new OsUpdateError("status.inPlaceUpdates.osUpdate.command is required for the operating system update");
  if (desired === "") throw new OsUpdateError("spec.inPlaceUpdates.operatingSystemVersion is required for the operating system update");

  log.info("Updating operating system in place", { from: current, to: desired });
  await patchNode(kube, node, { annotations: { [updatingOsVersionAnnotation]: desired } }, ctx.signal);
  const res = await runUpdateCommand(ctx, inPlace, [update.command, ...update.args]);
  if (!res.ok) {
    if (res.kind === "network") {
      const reason = `retriable error detected while updating the operating system to ${desired} (network problems), retrying in 10m: ${tail(res.output)}`;
      // The annotation goes: the next attempt is a retry of a command that never got through, not a rollback.
      await patchNode(kube, node, { labels: { "node.machine.sapcloud.io/update-result": "failed" }, annotations: { [updateFailedReasonAnnotation]: reason, [updatingOsVersionAnnotation]: null } }, ctx.signal);
      log.info("Operating system update hit network problems, retrying later", { requeueAfterMs: networkRetryRequeueMs });
      return { requeueAfterMs: networkRetryRequeueMs };
    }
    const reason = `non-retriable error detected while updating the operating system to ${desired}: ${tail(res.output)}`;
    await markFailed(kube, node, reason, ctx.signal);
    throw new TerminalError(reason);
  }

  const after = await readOsVersion(host);
  if (!osVersionsEqual(after, desired)) {
    log.info("Operating system update command succeeded, waiting for the restart into the new version", { current: after, desired });
    throw new TerminalError(
      `stopping reconciliation until gardener-node-agent is restarted after the OS update (running ${after}, updated to ${desired})`,
    );
  }
  log.info("Operating system updated", { version: after });
  await ctx.store.update((c) => {
    c.inPlaceUpdates.operatingSystem = false;
  });
  return {};
}
