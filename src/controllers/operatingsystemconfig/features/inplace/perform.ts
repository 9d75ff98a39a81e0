import { pods } from "../../../../kube/index.ts";
import type { Kube, KubeObject } from "../../../../kube/index.ts";
import type { Osc, OscChanges } from "../../../../osc/index.ts";
import type { ApplyContext } from "../../apply/context.ts";
import type { OscControllerDeps } from "../../deps.ts";
import type { GateHold } from "../../gates/gate.ts";
import { credentialsRotationPending, rotateCredentials } from "./credentials.ts";
import type { InPlaceDeps } from "./deps.ts";
import { drainGate } from "./drain-gate.ts";
import { computeInPlaceFlags } from "./flags.ts";
import { checkKubeletAfterUpdate, removeCpuManagerState } from "./kubelet.ts";
import { markSuccessful, readyForUpdate, updateResult } from "./node.ts";
import { osVersionsEqual, readOsVersion } from "./os-version.ts";
import { updateOperatingSystem } from "./os-update.ts";
import { inPlaceSpecOf } from "./spec.ts";

class InPlaceNotWiredError extends Error {
  override readonly name = "InPlaceNotWiredError";
  constructor() {
    super("the operating system config asks for an in-place update but this agent was started without in-place update support");
  }
}

const inPlaceOf = (deps: OscControllerDeps): InPlaceDeps => {
  if (deps.inPlace === undefined) throw new InPlaceNotWiredError();
  return deps.inPlace;
};

/**
 * Steps 8, 9 and 11 (planning, nothing written): read the OS version, fill the in-place flags of a freshly computed change set, and clear the OS flag
 * once the machine runs the desired version (after the reboot of an OS update).
 */
export async function planInPlace(
  deps: Pick<OscControllerDeps, "host">,
  lastApplied: Osc | undefined,
  osc: Osc,
  changes: OscChanges,
  resumed: boolean,
): Promise<void> {
  const spec = inPlaceSpecOf(osc);
  if (spec === undefined) return;
  const current = await readOsVersion(deps.host);
  if (!resumed) changes.inPlaceUpdates = computeInPlaceFlags(lastApplied, osc, current);
  if (changes.inPlaceUpdates.operatingSystem && osVersionsEqual(current, spec.operatingSystemVersion)) {
    changes.inPlaceUpdates.operatingSystem = false;
    changes.inPlaceUpdates.operatingSystemUpdate = undefined;
  }
}

/** Step 12: the drain gate over the planned change set. */
export const inPlaceGate = (changes: OscChanges, node: KubeObject | undefined): GateHold | undefined =>
  drainGate(changes.inPlaceUpdates, node);

/** Before the unit commands (step 20): what kubelet must not find when it restarts. */
export async function beforeUnitCommands(ctx: ApplyContext): Promise<void> {
  await removeCpuManagerState(ctx);
}

/** Step 21: kubelet health after an in-place kubelet update, then its flags are cleared. */
export async function afterUnitCommands(ctx: ApplyContext): Promise<void> {
  const f = ctx.store.changes.inPlaceUpdates.kubelet;
  if (!f.minorVersion && !f.config && !f.cpuManagerPolicy) return;
  await checkKubeletAfterUpdate(ctx, inPlaceOf(ctx.deps), ctx.node);
}

/** Every Pod bound to the node goes (they restart on the updated node), others stay. */
async function deletePodsOfNode(kube: Kube, nodeName: string, signal: AbortSignal): Promise<number> {
  const list = await kube.list<KubeObject>(pods, "", { fieldSelector: `spec.nodeName=${nodeName}`, signal });
  for (const p of list.items) await kube.delete(pods, p.metadata.namespace ?? "", p.metadata.name ?? "", { signal });
  return list.items.length;
}

/**
 * Step 24 (§9.3 `performInPlaceUpdate`): OS update (with rollback detection), credential rotations,
 * then the success report. Returns a retry delay when the OS update met network problems.
 */
export async function performInPlaceUpdate(ctx: ApplyContext, osc: Osc): Promise<{ retryAfterMs?: number }> {
  const node = ctx.node;
  if (node === undefined || inPlaceSpecOf(osc) === undefined) return {};
  const { kube, log } = ctx.deps;
  if (ctx.store.changes.inPlaceUpdates.operatingSystem) {
    const res = await updateOperatingSystem(ctx, inPlaceOf(ctx.deps), osc, node);
    if (res.requeueAfterMs !== undefined) return { retryAfterMs: res.requeueAfterMs };
  }
  if (credentialsRotationPending(ctx.store.changes)) await rotateCredentials(ctx, inPlaceOf(ctx.deps), node);

  const result = updateResult(node);
  if ((readyForUpdate(node) && result !== "successful") || result === "failed") {
    const deleted = await deletePodsOfNode(kube, node.metadata.name ?? "", ctx.signal);
    log.info("In-place update finished, labelling the node successful", { deletedPods: deleted });
    await markSuccessful(kube, node, ctx.signal);
  }
  return {};
}
