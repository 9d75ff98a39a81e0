export type { RolloutDeps } from "./gate.ts";
export { firstLookPauseMs } from "./gate.ts";
export { rolloutGate } from "./plugin.ts";
export { updateSlots } from "./lease-slots.ts";
export { PoolNodes } from "./pool-nodes.ts";
export { decide, formatSlot, rolloutParallelism, type Slot } from "./slots.ts";
export { defaultRolloutTimings, type RolloutTimings } from "./timings.ts";
export { slotsOnlyChanged } from "./watch.ts";
export { SlotPoll } from "./poll.ts";
