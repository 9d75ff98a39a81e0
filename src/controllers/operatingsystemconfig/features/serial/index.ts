export { leaseSpecOf, serialLockHold } from "./lease-spec.ts";
export { getLease as getSerialLease } from "./lock.ts";
export { enterSerial, leaveSerial } from "./gate.ts";
export { serialLeaseWatch } from "./lease-watch.ts";
export type { SerialEntry } from "./gate.ts";
