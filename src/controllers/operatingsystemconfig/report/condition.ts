import { type ConditionState, type ExistingCondition, findCondition, nodeCondition, type NodeCondition } from "../../../kube/index.ts";
import type { GateReason } from "../gates/gate.ts";
import { checksumPrefix } from "../plan/summary.ts";

/** The Node condition that tells whether this node runs its current OSC, and if not, why. */
const oscConditionType = "OperatingSystemConfigApplied";

export type OscConditionReason = "Applied" | "Applying" | "ApplyFailed" | GateReason;
export type ConditionStatus = "True" | "False" | "Unknown";

/** What the condition says, before times are added. */
export type OscConditionState = ConditionState<ConditionStatus, OscConditionReason>;

/** `drift`: what the last drift check found (drift/status.ts `driftConditionMessage`), appended. */
export const appliedState = (checksum: string, drift?: string): OscConditionState => ({
  status: "True",
  reason: "Applied",
  message: `Operating system config ${checksumPrefix(checksum)} is applied${drift === undefined ? "" : `; ${drift}`}`,
});

export const applyingState = (checksum: string): OscConditionState => ({
  status: "Unknown",
  reason: "Applying",
  message: `Applying operating system config ${checksumPrefix(checksum)}`,
});

export const failedState = (checksum: string, failure: string): OscConditionState => ({
  status: "False",
  reason: "ApplyFailed",
  // No checksum (a Secret without checksum/data-script): no empty gap in the sentence.
  message: `Applying operating system config ${checksum === "" ? "" : `${checksumPrefix(checksum)} `}failed: ${failure}`,
});

export const gateState = (reason: GateReason, message: string): OscConditionState => ({ status: "False", reason, message });

/** The condition to send; `existing`'s lastTransitionTime is kept while the status stays the same. */
export const oscCondition = (
  state: OscConditionState,
  nowMs: number,
  existing: ExistingCondition | undefined,
): NodeCondition<ConditionStatus, OscConditionReason> => nodeCondition(oscConditionType, state, nowMs, existing);

/** True when sending `state` would change nothing but the heartbeat time. */
export function conditionUnchanged(existing: ExistingCondition | undefined, state: OscConditionState): boolean {
  return existing?.status === state.status && existing.reason === state.reason && existing.message === state.message;
}

/** The OSC condition in a Node's `status.conditions`; malformed entries are skipped. */
export const findOscCondition = (node: unknown): ExistingCondition | undefined => findCondition(node, oscConditionType);
