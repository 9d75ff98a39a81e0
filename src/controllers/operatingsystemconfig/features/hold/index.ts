export { holdAnnotationPredicate, holdGate } from "./gate.ts";
