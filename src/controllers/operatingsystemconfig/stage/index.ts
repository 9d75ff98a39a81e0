export { defaultStageMaxBytes, Stager } from "./stager.ts";
export { listStageRecords, readStageRecord, stageStateText } from "./store.ts";
