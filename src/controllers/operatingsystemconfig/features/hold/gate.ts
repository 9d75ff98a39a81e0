import type { KubeObject, Predicate } from "../../../../kube/index.ts";
import type { Gate, GateDisruption, GateHold } from "../../gates/gate.ts";
import { type ChangeSummary, checksumPrefix, summarizeChanges } from "../../plan/summary.ts";

/** Node annotation that stops new OSC versions from being applied; its value is the operator's reason. */
const holdAnnotation = "node-agent.gardener.cloud/hold";

/** The hold reason, undefined when the Node carries no (or an empty) hold annotation. */
export function holdReason(node: KubeObject | undefined): string | undefined {
  const value = node?.metadata.annotations?.[holdAnnotation]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

/**
 * "2 files to write, 1 to delete, restarts kubelet.service" — what the held version would do; its restarts,
 * stops and in-place steps as the other gates of issue 26 assess them (under the disruption policy).
 */
function pendingText(summary: ChangeSummary, disruption: GateDisruption): string {
  const parts: string[] = [];
  if (summary.filesChanged > 0) parts.push(`${summary.filesChanged} file${summary.filesChanged === 1 ? "" : "s"} to write`);
  if (summary.filesDeleted > 0) parts.push(`${summary.filesDeleted} to delete`);
  if (disruption.text !== "") parts.push(disruption.text);
  if (parts.length > 0) return parts.join(", ");
  // Units only reloaded or re-read, as the disruption policy says.
  return disruption.units > 0 ? "no restart, stop or in-place step" : "no file or unit changes";
}

/** The hold's GateHold, undefined without the annotation. */
export function heldBy(
  node: KubeObject | undefined,
  checksum: string,
  pending: { readonly summary: ChangeSummary; readonly disruption: GateDisruption },
  requeueAfterMs: number,
): GateHold | undefined {
  const reason = holdReason(node);
  if (reason === undefined) return undefined;
  return {
    reason: "Held",
    message: `Held by ${holdAnnotation} (${reason}); pending operating system config ${checksumPrefix(checksum)}: ${pendingText(pending.summary, pending.disruption)}`,
    requeueAfterMs,
  };
}

/** The pending changes are planned and assessed only when it holds (after the label patch); the Node watch wakes it on removal. */
export const holdGate = (d: { readonly syncPeriodMs: number }): Gate => ({
  name: "hold",
  phase: "admit",
  online: true,
  async decide(ctx) {
    if (holdReason(ctx.node) === undefined) return { kind: "proceed" };
    const pending = { summary: summarizeChanges(await ctx.changes()), disruption: await ctx.disruption() };
    const held = heldBy(ctx.node, ctx.checksum, pending, d.syncPeriodMs);
    return held === undefined ? { kind: "proceed" } : { kind: "hold", hold: held };
  },
});

const annotationOf = (o: KubeObject): string => holdReason(o) ?? "";

/** Node events that matter to the OSC controller: the hold annotation set, changed or removed. */
export const holdAnnotationPredicate: Predicate<KubeObject> = {
  create: () => false,
  update: (oldObj, newObj) => annotationOf(oldObj) !== annotationOf(newObj),
  delete: () => false,
  generic: () => false,
};
