import { pods, type Kube, type KubeObject } from "../../../../kube/index.ts";
import type { Osc } from "../../../../osc/index.ts";
import type { StepContext } from "../../apply/context.ts";
import type { ApplyExtension } from "../../apply/extension.ts";
import { step } from "../../../../log/index.ts";
import type { PlanInput } from "../../plan/planner.ts";
import { rotateCredentials } from "./credentials.ts";
import { type InPlaceDeps, wired } from "./deps.ts";
import { computeInPlaceFlags, rotationFlagSet } from "./flags.ts";
import { checkKubeletAfterUpdate, removeCpuManagerState } from "./kubelet.ts";
import { markSuccessful, readyForUpdate, updateResult } from "./node.ts";
import { osVersionsEqual, readOsVersion } from "./os-version.ts";
import { updateOperatingSystem } from "./os-update.ts";
import { inPlaceSpecOf } from "../../plan/inplace-spec.ts";

/** Steps 8, 9 and 11 (nothing written): fill a fresh change set's in-place flags; clear the OS flag once the OS is there. */
async function planInPlace({ host, lastApplied, osc, changes, resumed }: PlanInput): Promise<void> {
  const spec = inPlaceSpecOf(osc);
  if (spec === undefined) return;
  const current = await readOsVersion(host);
  if (!resumed) changes.inPlaceUpdates = computeInPlaceFlags(lastApplied, osc, current);
  if (changes.inPlaceUpdates.operatingSystem && osVersionsEqual(current, spec.operatingSystemVersion)) {
    changes.inPlaceUpdates.operatingSystem = false;
    changes.inPlaceUpdates.operatingSystemUpdate = undefined;
  }
}

/** Every Pod bound to the node goes (they restart on the updated node), others stay. */
async function deletePodsOfNode(kube: Kube, nodeName: string, signal: AbortSignal): Promise<number> {
  const list = await kube.list<KubeObject>(pods, "", { fieldSelector: `spec.nodeName=${nodeName}`, signal });
  for (const p of list.items) await kube.delete(pods, p.metadata.namespace ?? "", p.metadata.name ?? "", { signal });
  return list.items.length;
}

/**
 * Step 24 (§9.3 `performInPlaceUpdate`): credential rotations, then the OS update (with rollback
 * detection), then the success report. Returns a retry delay when the OS update met network problems.
 * The rotations go first (upstream gardener#15704): a wipe-based OS update removes /etc and both state
 * files, so a rotation still pending then would be lost, while last-applied, written from scratch after
 * the reboot, would claim the new rotation time as done.
 */
async function performInPlaceUpdate(ctx: StepContext, inPlace: InPlaceDeps | undefined, osc: Osc): Promise<{ retryAfterMs?: number }> {
  const node = ctx.node;
  if (node === undefined || inPlaceSpecOf(osc) === undefined) return {};
  const { kube, log } = ctx.ports;
  if (rotationFlagSet(ctx.store.changes.inPlaceUpdates)) await rotateCredentials(ctx, wired(inPlace), node);
  if (ctx.store.changes.inPlaceUpdates.operatingSystem) {
    const res = await updateOperatingSystem(ctx, wired(inPlace), osc, node);
    if (res.requeueAfterMs !== undefined) return { retryAfterMs: res.requeueAfterMs };
  }

  const result = updateResult(node);
  if ((readyForUpdate(node) && result !== "successful") || result === "failed") {
    const deleted = await deletePodsOfNode(kube, node.metadata.name ?? "", ctx.signal);
    log.info("In-place update finished, labelling the node successful", { deletedPods: deleted });
    await markSuccessful(kube, node, ctx.signal);
  }
  return {};
}

/** In-place updates (§9.3) as an apply extension; `inPlace` absent: in-place work fails when due. */
export function inPlaceExtension(inPlace: InPlaceDeps | undefined): ApplyExtension {
  return {
    name: "in-place",
    plan: planInPlace,
    beforeUnitCommands: (ctx) => step("failed preparing kubelet for its in-place update", () => removeCpuManagerState(ctx)),
    afterUnitCommands: (ctx) => step("failed checking kubelet after its in-place update", () => checkKubeletAfterUpdate(ctx, inPlace)),
    async finish(ctx, osc) {
      const done = await step("failed performing in-place update", () => performInPlaceUpdate(ctx, inPlace, osc));
      return done.retryAfterMs === undefined
        ? undefined
        : { retryAfterMs: done.retryAfterMs, why: "operating system update met network problems" };
    },
  };
}
