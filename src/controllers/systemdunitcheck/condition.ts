import { type ExistingCondition, nodeCondition, type NodeCondition } from "../../kube/index.ts";
import type { UnitVerdict } from "./verdict.ts";

export const conditionType = "SystemdUnitsReady";
const reasonAllUnitsHealthy = "AllUnitsHealthy";
const reasonUnhealthyUnits = "UnhealthyUnits";
const reasonProgressingUnits = "ProgressingUnits";
const allHealthyMessage = "All systemd units from the operating system config are running as expected.";

/**
 * The `SystemdUnitsReady` condition (controllers.md §10 step 5). Unhealthy beats progressing;
 * messages keep the order of the verdicts. `existing` is the condition of that type on the Node, if
 * any: its lastTransitionTime is kept while the status does not change.
 */
export function systemdUnitsCondition(
  verdicts: readonly UnitVerdict[],
  nowMs: number,
  existing: ExistingCondition | undefined,
): NodeCondition<"True" | "False"> {
  const unhealthy: string[] = [];
  const progressing: string[] = [];
  for (const v of verdicts) {
    if (v.kind === "unhealthy") unhealthy.push(v.message);
    else if (v.kind === "progressing") progressing.push(v.message);
  }
  const [status, reason, message]: ["True" | "False", string, string] =
    unhealthy.length > 0
      ? ["False", reasonUnhealthyUnits, unhealthy.join("; ")]
      : progressing.length > 0
        ? ["True", reasonProgressingUnits, progressing.join("; ")]
        : ["True", reasonAllUnitsHealthy, allHealthyMessage];
  return nodeCondition(conditionType, { status, reason, message }, nowMs, existing);
}
