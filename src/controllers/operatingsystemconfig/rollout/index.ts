export { enterRollout, failRolloutOnUnitError, rolloutOff, type RolloutDeps, verifyRollout } from "./gate.ts";
export { verifyHealth } from "./health.ts";
export { healthHold, slotDecisionHold } from "./holds.ts";
export { readLease, updateSlots } from "./lease-slots.ts";
export { PoolNodes, poolLabel } from "./pool-nodes.ts";
export {
  decide,
  formatSlot,
  liveSlots,
  parallelismAnnotation,
  parseSlot,
  rolloutParallelism,
  type Slot,
  slotAnnotationPrefix,
  type SlotDecision,
  slotsOf,
  slotTime,
  viewOf,
} from "./slots.ts";
export { defaultRolloutTimings, parseRolloutTimings, type RolloutTimings, RolloutTimingsError } from "./timings.ts";
export { slotsChangedPredicate } from "./watch.ts";
