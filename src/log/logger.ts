import { redactFields, redactInto } from "./redact.ts";
import type { LogFields, Logger, LogLevel, LogSink, Severity } from "./types.ts";

const RANK: Readonly<Record<Severity, number>> = { debug: 0, info: 1, warn: 1, error: 2 };

export interface LoggerOptions {
  readonly level: LogLevel;
  readonly sink: LogSink;
  /** Fields on every record, e.g. `{ logger: "gardener-node-agent" }`. */
  readonly fields?: LogFields;
  /** Milliseconds since the epoch; defaults to Date.now. */
  readonly now?: () => number;
}

/** A leveled logger whose records carry merged, redacted fields (secrets never reach a sink). */
export const createLogger = (options: LoggerOptions): Logger => {
  const threshold = RANK[options.level];
  const now = options.now ?? Date.now;
  const make = (base: Record<string, unknown>): Logger => {
    const emit = (severity: Severity, msg: string, fields?: LogFields) => {
      if (RANK[severity] < threshold) return;
      const merged = fields === undefined ? base : redactInto({ ...base }, fields);
      options.sink.write({ time: now(), severity, msg, fields: merged });
    };
    return {
      debug: (msg, fields) => emit("debug", msg, fields),
      info: (msg, fields) => emit("info", msg, fields),
      warn: (msg, fields) => emit("warn", msg, fields),
      error: (msg, fields) => emit("error", msg, fields),
      child: (fields) => make({ ...base, ...redactFields(fields) }),
    };
  };
  return make(redactFields(options.fields ?? {}));
};

/** Drops everything; for code paths that need a Logger before one is configured. */
export const nopLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  child: () => nopLogger,
};
