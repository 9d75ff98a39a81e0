export { driftPathsMetric, runDriftLoop } from "./runner.ts";
export { createDriftStatus, driftConditionMessage, type DriftStatus } from "./status.ts";
