export type { InPlaceDeps } from "./deps.ts";
export { inPlaceNodePredicate, nodeToSecret } from "./drain-gate.ts";
export { afterUnitCommands, beforeUnitCommands, inPlaceGate, performInPlaceUpdate, planInPlace } from "./perform.ts";
export { createCommandRunner, createKubeletHealthProbe } from "./runner.ts";
export { checkInPlaceFields, UnsupportedOscFieldError } from "./spec.ts";
