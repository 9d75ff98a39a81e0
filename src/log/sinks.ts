import { formatRecord } from "./format.ts";
import type { LogFormat, LogRecord, LogSink, Severity } from "./types.ts";

/** Anything lines can be written to (process.stdout, a test buffer). */
export interface LineWriter {
  write(text: string): unknown;
}

/** syslog priorities: err=3, warning=4, info=6, debug=7. */
export const syslogPriority: Readonly<Record<Severity, number>> = { error: 3, warn: 4, info: 6, debug: 7 };

/** One line per record, through `line`; several records as one write. */
const lineSink = (out: LineWriter, line: (r: LogRecord) => string): LogSink => ({
  write: (r) => {
    out.write(line(r));
  },
  writeAll: (records) => {
    out.write(records.map(line).join(""));
  },
});

/** Plain formatted lines. */
export const createStreamSink = (out: LineWriter, format: LogFormat): LogSink => lineSink(out, (r) => `${formatRecord(r, format)}\n`);

/**
 * Lines prefixed with `<N>` (sd-daemon(3) priority prefixes), which systemd's stdout-to-journal
 * stream understands when the native journal protocol is not available.
 */
export const createSyslogPrefixSink = (out: LineWriter, format: LogFormat): LogSink =>
  lineSink(out, (r) => `<${syslogPriority[r.severity]}>${formatRecord(r, format)}\n`);
