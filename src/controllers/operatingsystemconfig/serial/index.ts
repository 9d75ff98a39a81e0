export { leaseSpecOf, serialLockHold } from "./lease-spec.ts";
export { getLease as getSerialLease } from "./lock.ts";
export { enterSerial, leaveSerial } from "./gate.ts";
