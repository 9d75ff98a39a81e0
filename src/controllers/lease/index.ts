export { healthCheckName, lastRenewalMetric, LeaseHeartbeat, LeaseNotRenewedError, renewalsMetric } from "./heartbeat.ts";
export { AlreadyOwnedError, desiredLease, leaseName, leaseNamePrefix, microTime, withControllerRef } from "./lease-object.ts";
export type { DesiredLease } from "./lease-object.ts";
export { createReconciler } from "./reconcile.ts";
export type { LeaseReconcilerDeps } from "./reconcile.ts";
export { setupLeaseController } from "./setup.ts";
