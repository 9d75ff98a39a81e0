export { unitRevertGate } from "./gate.ts";
export { unitRevertExtension } from "./verify.ts";
