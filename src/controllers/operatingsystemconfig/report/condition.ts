import * as v from "valibot";
import type { GateReason } from "../gates/gate.ts";
import { checksumPrefix } from "../plan/summary.ts";

/** The Node condition that tells whether this node runs its current OSC, and if not, why. */
const oscConditionType = "OperatingSystemConfigApplied";

/** What the condition says, before times are added. */
export type OscConditionState = {
  readonly status: "True" | "False" | "Unknown";
  readonly reason: "Applied" | "Applying" | "ApplyFailed" | GateReason;
  readonly message: string;
};

/** A core/v1 NodeCondition as sent on the wire (times are RFC 3339, second precision). */
export type NodeCondition = OscConditionState & {
  readonly type: string;
  readonly lastHeartbeatTime: string;
  readonly lastTransitionTime: string;
};

/** metav1.Time text: RFC 3339 in UTC, whole seconds. */
export const kubeTime = (ms: number): string => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");

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
export function oscCondition(state: OscConditionState, nowMs: number, existing: ExistingCondition | undefined): NodeCondition {
  const now = kubeTime(nowMs);
  const kept = existing?.status === state.status ? existing.lastTransitionTime : undefined;
  return { type: oscConditionType, ...state, lastHeartbeatTime: now, lastTransitionTime: kept ?? now };
}

/** True when sending `state` would change nothing but the heartbeat time. */
export function conditionUnchanged(existing: ExistingCondition | undefined, state: OscConditionState): boolean {
  return existing?.status === state.status && existing.reason === state.reason && existing.message === state.message;
}

const conditionSchema = v.looseObject({
  type: v.string(),
  status: v.optional(v.string()),
  reason: v.optional(v.string()),
  message: v.optional(v.string()),
  lastTransitionTime: v.optional(v.string()),
});
const nodeStatusSchema = v.looseObject({
  status: v.optional(v.looseObject({ conditions: v.optional(v.nullable(v.array(v.unknown()))) })),
});

export type ExistingCondition = v.InferOutput<typeof conditionSchema>;

/** The condition of `type` in a Node's `status.conditions`; malformed entries are skipped. */
export function findCondition(node: unknown, type: string = oscConditionType): ExistingCondition | undefined {
  const parsed = v.safeParse(nodeStatusSchema, node);
  if (!parsed.success) return undefined;
  for (const raw of parsed.output.status?.conditions ?? []) {
    const c = v.safeParse(conditionSchema, raw);
    if (c.success && c.output.type === type) return c.output;
  }
  return undefined;
}
