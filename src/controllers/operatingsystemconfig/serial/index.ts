export {
  acquiredSpec,
  heldByAnother,
  leaseSpecOf,
  microTime,
  releasedSpec,
  remainingMs,
  renewedInTime,
  type SerialLeaseSpec,
  serialLeaseDurationSeconds,
  serialLockHold,
} from "./lease-spec.ts";
export { acquireSerialLock, getLease as getSerialLease, releaseSerialLock, type SerialLockDeps, type SerialLockOutcome, serialLeaseNamespace } from "./lock.ts";
export { enqueueSecretWhenOutdated, isOutdated, type LeaseHandlerDeps, serialLeasePredicate } from "./watch.ts";
export { enterSerial, leaveSerial, type SerialEntry } from "./gate.ts";
