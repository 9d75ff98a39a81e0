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
  for (const [k, v] of Object.entries(r.fields)) {
    if (k === "logger") continue;
    head[outputKey(k)] = plain(v);
  }
  return JSON.stringify(head, replacer);
};

const LEVEL_TEXT: Readonly<Record<Severity, string>> = { debug: "DEBUG", info: "INFO", warn: "WARN", error: "ERROR" };

/** zap console style: `ts<TAB>LEVEL<TAB>logger<TAB>msg<TAB>{fields}`. */
export const formatText = (r: LogRecord): string => {
  const parts = [new Date(r.time).toISOString(), LEVEL_TEXT[r.severity]];
  const logger = r.fields["logger"];
  if (typeof logger === "string") parts.push(logger);
  parts.push(r.msg);
  const rest = Object.entries(r.fields).filter(([k]) => k !== "logger");
  if (rest.length > 0) parts.push(JSON.stringify(Object.fromEntries(rest.map(([k, v]) => [outputKey(k), plain(v)])), replacer));
  return parts.join("\t");
};

export const formatRecord = (r: LogRecord, format: LogFormat): string => (format === "json" ? formatJson(r) : formatText(r));
