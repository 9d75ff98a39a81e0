export { type CommandOutput, defaultInPlaceTiming, type InPlaceDeps, type InPlaceTiming, type RunCommand } from "./deps.ts";
export { drainGate, drainGateRequeueMs, inPlaceNodePredicate, nodeToSecret } from "./drain-gate.ts";
export { computeInPlaceFlags, noInPlaceFlags, rotationTriggered } from "./flags.ts";
export { kubeletConfigChanges, kubeletMinorVersionChanged } from "./kubelet-config.ts";
export { osVersionsEqual, parseOsVersion } from "./os-version.ts";
export { afterUnitCommands, beforeUnitCommands, inPlaceGate, performInPlaceUpdate, planInPlace } from "./perform.ts";
export { createCommandRunner, createKubeletHealthProbe } from "./runner.ts";
export { checkInPlaceFields, UnsupportedOscFieldError } from "./spec.ts";
