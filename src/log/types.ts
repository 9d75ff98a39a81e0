export type LogLevel = "debug" | "info" | "error";
export type LogFormat = "json" | "text";
export type LogFields = Readonly<Record<string, unknown>>;

/** Severity of one record; `warn` is printed at the `info` threshold (upstream has no warn level). */
export type Severity = "debug" | "info" | "warn" | "error";

export interface LogRecord {
  readonly time: number;
  readonly severity: Severity;
  readonly msg: string;
  readonly fields: LogFields;
}

/** Where formatted records go: stdout, journald, or a test buffer. */
export interface LogSink {
  write(record: LogRecord): void;
  /** The records in order, as one write where the sink takes lines (where it has no such write, one `write` each). */
  writeAll?(records: readonly LogRecord[]): void;
}

/** Structured logger. Messages are fixed and capitalised; keys are lowerCamelCase; `err` carries an Error. */
export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
  /** `info(msg, fields)` for each entry, in order, handed to the sink together (see infoEach). */
  infoEach?(msg: string, each: readonly LogFields[]): void;
}
