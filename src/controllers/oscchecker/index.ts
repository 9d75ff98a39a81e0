export { createOscCheckerEventRecorder, OscCheckerError, runOscChecker } from "./checker.ts";
export type { OscCheckerDeps } from "./checker.ts";
export { LastAppliedParseError } from "./last-applied.ts";
export { checkedView, secretTargetOsc } from "./target.ts";
