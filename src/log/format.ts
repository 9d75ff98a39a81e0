import { keepOutOfTopTier } from "../jit/index.ts";
import { errorText } from "./error-text.ts";
import type { LogFormat, LogRecord, Severity } from "./types.ts";

/** Field values as they appear in output: Errors become their text, bigints numbers-as-text. */
const plain = (value: unknown): unknown => {
  if (value instanceof Error) return errorText(value);
  if (typeof value === "bigint") return value.toString();
  return value;
};

const replacer = (_key: string, value: unknown): unknown => plain(value);

/** zap names the error field `error`; our loggers take it as `err`. */
const outputKey = (key: string): string => (key === "err" ? "error" : key);

/** One zap-like JSON line: `{"level","ts","logger","msg",...fields}` (no trailing newline). */
export const formatJson = (r: LogRecord): string => {
  const head: Record<string, unknown> = { level: r.severity, ts: new Date(r.time).toISOString() };
  const logger = r.fields["logger"];
  if (logger !== undefined) head["logger"] = logger;
  head["msg"] = r.msg;
  let nested = false;
  for (const k of Object.keys(r.fields)) {
    if (k === "logger") continue;
    const v = plain(r.fields[k]);
    head[outputKey(k)] = v;
    if (v !== null && typeof v === "object") nested = true;
  }
  // The replacer only matters inside nested values (see formatText).
  return nested ? JSON.stringify(head, replacer) : JSON.stringify(head);
};

const LEVEL_TEXT: Readonly<Record<Severity, string>> = { debug: "DEBUG", info: "INFO", warn: "WARN", error: "ERROR" };

/**
 * zap console style: `ts<TAB>LEVEL<TAB>logger<TAB>msg<TAB>{fields}`. Built without intermediate arrays, and
 * stringified without the replacer when every field is a plain value (a replacer makes JSON.stringify call
 * back for every key): a 1000-file apply logs 1000 records on its way to the first restart.
 */
export const formatText = (r: LogRecord): string => {
  let line = `${new Date(r.time).toISOString()}\t${LEVEL_TEXT[r.severity]}`;
  const logger = r.fields["logger"];
  if (typeof logger === "string") line += `\t${logger}`;
  line += `\t${r.msg}`;
  const rest: Record<string, unknown> = {};
  let count = 0;
  let nested = false;
  for (const k of Object.keys(r.fields)) {
    if (k === "logger") continue;
    const v = plain(r.fields[k]);
    rest[outputKey(k)] = v;
    count++;
    if (v !== null && typeof v === "object") nested = true;
  }
  if (count > 0) line += `\t${nested ? JSON.stringify(rest, replacer) : JSON.stringify(rest)}`;
  return line;
};

export const formatRecord = (r: LogRecord, format: LogFormat): string => (format === "json" ? formatJson(r) : formatText(r));
// Issue 25: per file or line of a 1000-file apply (jit/top-tier.ts).
keepOutOfTopTier(outputKey);
