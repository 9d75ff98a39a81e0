// What several controllers share. Controller folders never import each other; they import this.
export { discoverNode, enqueueOwnKey, findNode, nodePredicate, nodeSelectors } from "./node-identity.ts";
export type { NodeIdentity } from "./node-identity.ts";
export { changesPath, lastAppliedPath, stateDir } from "./state-paths.ts";
export { readLastApplied, readLastAppliedDigests, readLastAppliedWithTypeMeta, writeLastApplied } from "./last-applied.ts";
export { createUnitCheckNow, type UnitCheckNow } from "./unit-check-now.ts";
