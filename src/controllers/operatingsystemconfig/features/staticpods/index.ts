export { staticPodsGate } from "./gate.ts";
