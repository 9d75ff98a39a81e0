export { enterRollout, failRolloutOnUnitError, rolloutOff, type RolloutDeps, verifyRollout } from "./gate.ts";
export { verifyHealth } from "./health.ts";
export { healthHold, slotDecisionHold } from "./holds.ts";
export { readLease, updateSlots } from "./lease-slots.ts";
export { PoolNodes } from "./pool-nodes.ts";
export { decide, formatSlot, liveSlots, rolloutParallelism, type Slot, slotsOf, slotTime } from "./slots.ts";
export { defaultRolloutTimings, parseRolloutTimings, type RolloutTimings, rolloutTimingsEnv } from "./timings.ts";
export { slotsChangedPredicate } from "./watch.ts";
