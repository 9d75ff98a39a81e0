export { errorText } from "./error-text.ts";
export { StepError, step } from "./step-error.ts";
export { formatJson, formatRecord, formatText } from "./format.ts";
export { createLogger, nopLogger } from "./logger.ts";
export { createStreamSink, syslogPriority } from "./sinks.ts";
export type { LineWriter } from "./sinks.ts";
export type { LogFields, LogFormat, Logger, LogLevel, LogRecord, LogSink } from "./types.ts";
