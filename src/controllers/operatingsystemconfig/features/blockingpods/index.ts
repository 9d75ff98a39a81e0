export { blockingPodsGate, blockingPodsPredicate } from "./gate.ts";
export { BlockingPodsWatch, type BlockingPodsSource } from "./watch.ts";
