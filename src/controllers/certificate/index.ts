export { ClientCertificateError, clientCertificateValidity, jitter, renewalDeadline, renewalFraction, renewalJitter } from "./deadline.ts";
export type { CertificateValidity } from "./deadline.ts";
export { CertificateRotationError, createReconciler, endpointOf } from "./reconcile.ts";
export type { CertificateReconcilerDeps } from "./reconcile.ts";
export { setupCertificateController } from "./setup.ts";
export type { CertificateControllerSetup } from "./setup.ts";
export { controllerName, newCertificateController, reconcileTimeoutMs, singletonKey } from "./watch.ts";
