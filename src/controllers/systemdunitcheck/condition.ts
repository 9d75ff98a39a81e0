import * as v from "valibot";
import type { UnitVerdict } from "./verdict.ts";

export const conditionType = "SystemdUnitsReady";
const reasonAllUnitsHealthy = "AllUnitsHealthy";
const reasonUnhealthyUnits = "UnhealthyUnits";
const reasonProgressingUnits = "ProgressingUnits";
const allHealthyMessage = "All systemd units from the operating system config are running as expected.";

/** A core/v1 NodeCondition as sent on the wire (times are RFC 3339, second precision). */
export interface NodeCondition {
  readonly type: string;
  readonly status: "True" | "False";
  readonly lastHeartbeatTime: string;
  readonly lastTransitionTime: string;
  readonly reason: string;
  readonly message: string;
}

/** metav1.Time text: RFC 3339 in UTC, whole seconds. */
export const kubeTime = (ms: number): string => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");

/**
 * The `SystemdUnitsReady` condition (controllers.md §10 step 5). Unhealthy beats progressing;
 * messages keep the order of the verdicts. `existing` is the condition of that type on the Node, if
 * any: its lastTransitionTime is kept while the status does not change.
 */
export function systemdUnitsCondition(
  verdicts: readonly UnitVerdict[],
  nowMs: number,
  existing: ExistingCondition | undefined,
): NodeCondition {
  const unhealthy: string[] = [];
  const progressing: string[] = [];
  for (const v of verdicts) {
    if (v.kind === "unhealthy") unhealthy.push(v.message);
    else if (v.kind === "progressing") progressing.push(v.message);
  }
  const [status, reason, message]: [NodeCondition["status"], string, string] =
    unhealthy.length > 0
      ? ["False", reasonUnhealthyUnits, unhealthy.join("; ")]
      : progressing.length > 0
        ? ["True", reasonProgressingUnits, progressing.join("; ")]
        : ["True", reasonAllUnitsHealthy, allHealthyMessage];
  const now = kubeTime(nowMs);
  return {
    type: conditionType,
    status,
    lastHeartbeatTime: now,
    lastTransitionTime: keptTransition(existing, status) ?? now,
    reason,
    message,
  };
}

/** The existing condition's lastTransitionTime when its status equals `status`. */
function keptTransition(existing: ExistingCondition | undefined, status: string): string | undefined {
  return existing?.status === status ? existing.lastTransitionTime : undefined;
}

const conditionSchema = v.looseObject({
  type: v.string(),
  status: v.optional(v.string()),
  lastTransitionTime: v.optional(v.string()),
});
const nodeStatusSchema = v.looseObject({
  status: v.optional(v.looseObject({ conditions: v.optional(v.nullable(v.array(v.unknown()))) })),
});

export type ExistingCondition = v.InferOutput<typeof conditionSchema>;

/** The condition of `type` in a Node's `status.conditions`; malformed entries are skipped. */
export function findCondition(node: unknown, type: string): ExistingCondition | undefined {
  const parsed = v.safeParse(nodeStatusSchema, node);
  if (!parsed.success) return undefined;
  for (const raw of parsed.output.status?.conditions ?? []) {
    const c = v.safeParse(conditionSchema, raw);
    if (c.success && c.output.type === type) return c.output;
  }
  return undefined;
}
