export { errorText } from "./error-text.ts";
export { step, StepError } from "./step-error.ts";
export { formatRecord } from "./format.ts";
export { createLogger, infoEach, nopLogger } from "./logger.ts";
export { createStreamSink, syslogPriority } from "./sinks.ts";
export type { LineWriter } from "./sinks.ts";
export type { LogFields, LogFormat, Logger, LogLevel, LogRecord, LogSink } from "./types.ts";
export type { TextRedactor } from "./redact-text.ts";
