import type { KubeObject } from "../../../../kube/index.ts";
import type { StepContext } from "../../apply/context.ts";
import { timingOf, type InPlaceDeps, wired } from "./deps.ts";
import { kubeletFlagSet } from "./flags.ts";
import { markFailed } from "./node.ts";
import { runJob } from "../../apply/units.ts";
import { errorText } from "../../../../log/index.ts";

const kubeletUnitName = "kubelet.service";
const cpuManagerStatePath = "/var/lib/kubelet/cpu_manager_state";

class KubeletHealthError extends Error {
  override readonly name = "KubeletHealthError";
}

/** Step 20: a new CPU-manager policy makes kubelet refuse its old checkpoint, so it goes before kubelet restarts. */
export async function removeCpuManagerState(ctx: StepContext): Promise<void> {
  const { changes } = ctx.store;
  if (!changes.inPlaceUpdates.kubelet.cpuManagerPolicy) return;
  if (!changes.units.commands.some((c) => c.name === kubeletUnitName)) return;
  if (await ctx.ports.host.remove(cpuManagerStatePath))
    ctx.ports.log.info("Removed CPU manager state for the new CPU manager policy", { path: cpuManagerStatePath });
}

/** Polls kubelet's healthz until HTTP 200 or the timeout; false when it never became healthy. */
async function waitForKubeletHealthy(ctx: StepContext, inPlace: InPlaceDeps): Promise<{ healthy: boolean; lastError: string }> {
  const { clock } = ctx.ports;
  const timing = timingOf(inPlace);
  const deadline = clock.now() + timing.kubeletHealthTimeoutMs;
  let lastError = "no answer yet";
  for (;;) {
    try {
      if (await inPlace.kubeletHealthy(ctx.signal)) return { healthy: true, lastError: "" };
      lastError = "healthz did not answer 200";
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      lastError = errorText(err);
    }
    if (clock.now() + timing.kubeletHealthIntervalMs > deadline) return { healthy: false, lastError };
    await clock.sleep(timing.kubeletHealthIntervalMs, ctx.signal);
  }
}

/**
 * Step 21: after the unit commands, any kubelet flag means kubelet was updated in place: it must turn
 * healthy before the flags are cleared; otherwise the Node is labelled failed with the reason.
 */
export async function checkKubeletAfterUpdate(ctx: StepContext, inPlace: InPlaceDeps | undefined): Promise<void> {
  if (!kubeletFlagSet(ctx.store.changes.inPlaceUpdates)) return;
  ctx.ports.log.info("Checking kubelet health after the in-place kubelet update");
  await kubeletHealthyOrFailed(ctx, wired(inPlace), ctx.node);
  await ctx.store.update((c) => {
    c.inPlaceUpdates.kubelet = { minorVersion: false, config: false, cpuManagerPolicy: false };
  });
}

/** Restarts kubelet (CA rotation) and waits for it like after a kubelet update. */
export async function restartKubelet(ctx: StepContext, inPlace: InPlaceDeps, node: KubeObject): Promise<void> {
  await runJob(ctx, "restart", kubeletUnitName);
  await kubeletHealthyOrFailed(ctx, inPlace, node);
}

/** Waits for kubelet to turn healthy; if it does not, the Node (when known) is labelled failed with the reason. */
async function kubeletHealthyOrFailed(ctx: StepContext, inPlace: InPlaceDeps, node: KubeObject | undefined): Promise<void> {
  const res = await waitForKubeletHealthy(ctx, inPlace);
  if (res.healthy) return;
  const reason = `kubelet is not healthy after in-place update: ${res.lastError}`;
  if (node !== undefined) await markFailed(ctx.ports.kube, node, reason, ctx.signal);
  throw new KubeletHealthError(reason);
}
