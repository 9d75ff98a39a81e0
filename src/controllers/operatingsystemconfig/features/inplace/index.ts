export type { InPlaceDeps } from "./deps.ts";
export { inPlaceDrainGate, inPlaceNodePredicate, nodeToSecret } from "./drain-gate.ts";
export { inPlaceExtension } from "./extension.ts";
export { createCommandRunner, createKubeletHealthProbe } from "./runner.ts";
