export { serialGate } from "./gate.ts";
export { serialLeaseWatch } from "./watch.ts";
