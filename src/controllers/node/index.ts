export { createReconciler, RemoveAnnotationError, restartAction, restartReason } from "./reconcile.ts";
export type { NodeReconcilerDeps } from "./reconcile.ts";
export { agentUnitName, isValidServiceName, restartPlan } from "./restart-plan.ts";
export type { RestartPlan } from "./restart-plan.ts";
export { setupNodeController } from "./setup.ts";
export type { NodeControllerSetup } from "./setup.ts";
export {
  controllerName,
  maxConcurrentReconciles,
  newNodeController,
  reconcileTimeoutMs,
  restartAnnotation,
  restartAnnotationPredicate,
} from "./watch.ts";
