export { createReconciler, HostnameReadError } from "./reconcile.ts";
export type { HostnameCheckDeps } from "./reconcile.ts";
export { setupHostnameCheckController } from "./setup.ts";
export type { HostnameCheckSetup } from "./setup.ts";
export { checkIntervalMs, controllerName, newHostnameCheckController, singletonKey } from "./watch.ts";
