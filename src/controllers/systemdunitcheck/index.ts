export {
  allHealthyMessage,
  conditionType,
  findCondition,
  kubeTime,
  reasonAllUnitsHealthy,
  reasonProgressingUnits,
  reasonUnhealthyUnits,
  systemdUnitsCondition,
} from "./condition.ts";
export type { ExistingCondition, NodeCondition } from "./condition.ts";
export { UnitCheckError } from "./errors.ts";
export { LastAppliedOscError, readLastAppliedOsc } from "./last-applied.ts";
export { managedUnits } from "./managed-units.ts";
export type { ManagedUnit } from "./managed-units.ts";
export { createReconciler } from "./reconcile.ts";
export type { SystemdUnitCheckDeps } from "./reconcile.ts";
export { setupSystemdUnitCheckController } from "./setup.ts";
