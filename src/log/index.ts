export { errorText } from "./error-text.ts";
export { StepError, step } from "./step-error.ts";
export { formatJson, formatRecord, formatText } from "./format.ts";
export { createLogger, nopLogger } from "./logger.ts";
export type { LoggerOptions } from "./logger.ts";
export { isSecretKey, REDACTED, redactFields } from "./redact.ts";
export { createStreamSink, createSyslogPrefixSink, syslogPriority } from "./sinks.ts";
export type { LineWriter } from "./sinks.ts";
export type { LogFields, LogFormat, Logger, LogLevel, LogRecord, LogSink, Severity } from "./types.ts";
