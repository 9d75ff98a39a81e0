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
    const infoEach = (msg: string, each: readonly LogFields[]) => {
      if (RANK.info < threshold) return;
      const time = now();
      const records = each.map((fields) => ({ time, severity: "info" as const, msg, fields: redactInto({ ...base }, fields) }));
      if (options.sink.writeAll !== undefined) options.sink.writeAll(records);
      else for (const r of records) options.sink.write(r);
    };
    return {
      debug: (msg, fields) => emit("debug", msg, fields),
      info: (msg, fields) => emit("info", msg, fields),
      warn: (msg, fields) => emit("warn", msg, fields),
      error: (msg, fields) => emit("error", msg, fields),
      child: (fields) => make({ ...base, ...redactFields(fields) }),
      infoEach,
    };
  };
  return make(redactFields(options.fields ?? {}));
};

/**
 * `log.info(msg, fields)` for each entry, in order: many lines of one step (e.g. a "Wrote file" per file of a
 * 1000-file group) reach a line sink as one write instead of one each. Formatted and written at once, when
 * called: nothing waits in a buffer for a later step, so a crash right after loses no more than before.
 */
export function infoEach(log: Logger, msg: string, each: readonly LogFields[]): void {
  if (log.infoEach !== undefined) log.infoEach(msg, each);
  else for (const fields of each) log.info(msg, fields);
}

/** Drops everything; for code paths that need a Logger before one is configured. */
export const nopLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  child: () => nopLogger,
};
