export { checkFile, checkUnit, resolveUnitPath, unitDirectories } from "./checks.ts";
export { createOscCheckerEventRecorder, OscCheckerError, oscCheckerComponent, runOscChecker } from "./checker.ts";
export type { OscCheckerDeps } from "./checker.ts";
export type { Finding, FindingReason } from "./findings.ts";
export { LastAppliedParseError, parseLastApplied } from "./last-applied.ts";
export type { CheckedDropIn, CheckedFile, CheckedInline, CheckedOsc, CheckedUnit } from "./last-applied.ts";
export { checkedView, secretTargetOsc } from "./target.ts";
export type { ReadTargetOsc } from "./target.ts";
