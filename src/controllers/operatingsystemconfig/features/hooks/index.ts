export { disruptionHooksGate, disruptionHooksPredicate } from "./gate.ts";
