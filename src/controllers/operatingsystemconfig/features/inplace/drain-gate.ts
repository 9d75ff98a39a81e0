import type { KubeObject, ObjectKey, Predicate } from "../../../../kube/index.ts";
import type { Gate, GateHold } from "../../gates/gate.ts";
import { anyInPlaceFlag, type InPlaceFlags, kubeletFlagSet } from "./flags.ts";
import { readyForUpdate, secretNameLabel, updateResult } from "./node.ts";

/** A safety net only: the Node watch enqueues the Secret the moment the condition appears. */
const drainGateRequeueMs = 60_000;

/** What is pending, in words for the hold message (never file content). */
function pendingInPlaceWork(f: InPlaceFlags): string[] {
  const out: string[] = [];
  if (f.operatingSystem) out.push("operating system update");
  if (kubeletFlagSet(f)) out.push("kubelet update");
  if (f.certificateAuthoritiesRotation.kubelet || f.certificateAuthoritiesRotation.nodeAgent) out.push("certificate authority rotation");
  if (f.serviceAccountKeyRotation) out.push("service account key rotation");
  return out;
}

/** Step 12 (§9.3): in-place work waits for InPlaceUpdate/ReadyForUpdate, or update-result=failed (the automatic retry). */
export function drainGate(flags: InPlaceFlags, node: KubeObject | undefined): GateHold | undefined {
  if (!anyInPlaceFlag(flags)) return undefined;
  if (readyForUpdate(node) || updateResult(node) === "failed") return undefined;
  return {
    reason: "WaitingForDrain",
    message: `In-place update pending (${pendingInPlaceWork(flags).join(", ")}): waiting for the Node condition InPlaceUpdate with reason ReadyForUpdate (node drained by machine-controller-manager)`,
    requeueAfterMs: drainGateRequeueMs,
  };
}

/** The apply persists the change set before this gate holds. */
export const inPlaceDrainGate = (): Gate => ({
  name: "drain",
  phase: "plan",
  async decide(ctx) {
    const hold = drainGate((await ctx.changes()).inPlaceUpdates, ctx.node);
    return hold === undefined ? { kind: "proceed" } : { kind: "hold", hold };
  },
});

/** §2.2: Create with the condition; Update only on the transition to having it; never Delete/Generic. */
export const inPlaceNodePredicate: Predicate<KubeObject> = {
  create: (node) => readyForUpdate(node),
  update: (oldNode, newNode) => !readyForUpdate(oldNode) && readyForUpdate(newNode),
  delete: () => false,
  generic: () => false,
};

/** Node → `kube-system/<label worker.gardener.cloud/gardener-node-agent-secret-name>`; no label → nothing. */
export function nodeToSecret(node: KubeObject): readonly ObjectKey[] {
  const name = node.metadata.labels?.[secretNameLabel];
  return name === undefined || name === "" ? [] : [{ namespace: "kube-system", name }];
}
