export { serialGate } from "./gate.ts";
export { serialLeaseWatch } from "./lease-watch.ts";
