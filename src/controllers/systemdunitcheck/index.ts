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
export type { SystemdUnitCheckSetup } from "./setup.ts";
export { unitVerdict } from "./verdict.ts";
export type { UnitFacts, UnitVerdict, VerdictContext } from "./verdict.ts";
export { controllerName, maxConcurrentReconciles, newSystemdUnitCheckController, systemdUnitCheckPredicate } from "./watch.ts";
