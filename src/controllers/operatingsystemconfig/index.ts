export { ApplyLock } from "./apply-lock.ts";
export { createDriftStatus, driftConditionMessage, driftPathsMetric, type DriftStatus, runDriftLoop } from "./drift/index.ts";
export { ChangesStore, type PersistChanges } from "./changes-store.ts";
export { type ContainerdInfo, createContainerdInfo, type ProbeFetch } from "./containerd/index.ts";
export type { ExtractImageFile, NodeIdentity, OscControllerConfig, OscControllerDeps } from "./deps.ts";
export { computeChanges, resumeOrCompute } from "./diff.ts";
export { FileApplyError } from "./files.ts";
export { gardenadmDir, isSelfHostedMachine, namedSecretPredicate, oscSecretSelectors, poolLabel, skipsStateFiles } from "./gardenadm.ts";
export { allFiles, mergeUnits } from "./merge.ts";
export { OscInputError } from "./plan.ts";
export { createOscMetrics, type OscMetrics } from "./metrics.ts";
export { OscReporter, type ApplyRun } from "./report.ts";
export { holdAnnotation } from "./hold.ts";
export { applyHistoryAnnotation } from "./history.ts";
export { oscConditionType } from "./condition.ts";
export type { GateHold, GateReason } from "./gate.ts";
export { createReconciler } from "./reconcile.ts";
export { OscChecksumError, OscSecretError } from "./secret-input.ts";
export { removeStaleTemps, removeStaleTempsAtStart, writtenDirs } from "./stale-temps.ts";
export { unitFailurePolicyAnnotation, unitRevertedReason, unitRevertHold } from "./revert.ts";
export { UnitCommandsError } from "./units.ts";
export {
  controllerName,
  isSerial,
  maxConcurrentReconciles,
  newOscController,
  ReconciliationDelay,
  reconcileTimeoutMs,
  secretHandler,
  secretPredicate,
} from "./watch.ts";
