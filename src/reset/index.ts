export { agentUnit, kubeletDir, kubeletUnit, lastAppliedPath, resetNode, sandboxAttempts, stateDir, successMessage } from "./reset.ts";
export type { ResetDeps } from "./reset.ts";
export { runTasks, TaskGraphError } from "./tasks.ts";
export type { Task, TaskOutcome, TaskReporter } from "./tasks.ts";
