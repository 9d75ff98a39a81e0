export { enterRollout, failRolloutOnUnitError, type RolloutDeps, rolloutOff, verifyRollout } from "./gate.ts";
export { verifyHealth } from "./health.ts";
export { healthHold, slotDecisionHold } from "./holds.ts";
export { readLease, updateSlots } from "./lease-slots.ts";
export { PoolNodes } from "./pool-nodes.ts";
export { decide, formatSlot, liveSlots, mayBeGone, rolloutParallelism, type Slot, slotsOf, slotTime } from "./slots.ts";
export { defaultRolloutTimings, type RolloutTimings } from "./timings.ts";
export { slotsChangedPredicate } from "./watch.ts";
export type { RolloutEntry } from "./gate.ts";
