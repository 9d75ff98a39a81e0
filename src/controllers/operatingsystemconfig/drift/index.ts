export { describeDrift, detectDrift, type DriftItem, type DriftKind } from "./detect.ts";
export { repairChanges } from "./repair-plan.ts";
export {
  applyUnfinished,
  driftDetectedReason,
  driftPass,
  type DriftPassOutcome,
  driftPathsMetric,
  driftRepairedReason,
  driftRepairFailedReason,
  type DriftRunnerDeps,
  runDriftLoop,
} from "./runner.ts";
export { createDriftStatus, driftConditionMessage, driftPolicyAnnotation, driftPolicyOf, type DriftPolicy, type DriftStatus, type DriftSummary } from "./status.ts";
