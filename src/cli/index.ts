export type { Command, CommandContext, FlagKind, FlagSpec, Writer } from "./command.ts";
export type { CommandEntry } from "./commands.ts";
export { UsageError } from "./errors.ts";
export { commonFlags, parseFlags } from "./flags.ts";
export type { ParsedFlags } from "./flags.ts";
export { createCommandSink, flagLines, loadCommandConfig, logSettings, startCommandLogger } from "./startup.ts";
export type { ControllerDeps, RunningControllers } from "./start-controllers.ts";
