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
