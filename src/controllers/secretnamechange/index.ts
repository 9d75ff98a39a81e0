export { rewriteSecretName } from "./config-rewrite.ts";
export type { Rewrite } from "./config-rewrite.ts";
export { ConfigRewriteError, createReconciler, rewriteFailedReason } from "./reconcile.ts";
export type { SecretNameChangeDeps } from "./reconcile.ts";
export { setupSecretNameChangeController } from "./setup.ts";
export type { SecretNameChangeSetup } from "./setup.ts";
export { controllerName, newSecretNameChangeController, reconcileTimeoutMs, secretNameLabel, secretNameLabelPredicate } from "./watch.ts";
