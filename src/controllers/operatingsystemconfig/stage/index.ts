export { defaultStageMaxBytes, Stager, type StageOutcome, type StagerDeps } from "./stager.ts";
export { listStageRecords, readStageRecord, stageDir, stageStateText, type StageRecord, type StageState } from "./store.ts";
