import { errorText, formatRecord, syslogPriority } from "../log/index.ts";
import type { LineWriter, LogFormat, LogRecord, LogSink } from "../log/index.ts";
import { loadLibSystemd } from "./libsystemd.ts";
import type { LibSystemd } from "./libsystemd.ts";

const defaultSyslogIdentifier = "gardener-node-agent";
const journalSocketPath = "/run/systemd/journal/socket";

const isSocket = async (path: string): Promise<boolean> => {
  const { stat } = await import("node:fs/promises");
  try {
    return (await stat(path)).isSocket();
  } catch (err) {
    // Missing (or unreadable) means "no journald here", which is the case this probe exists for.
    if (err instanceof Error) return false;
    throw err;
  }
};

/**
 * libsystemd for journal logging, or undefined when the journal cannot be used: sd_journal_sendv
 * reports success even when no journald listens, so the socket is probed first.
 */
export const openJournal = async (socketPath = journalSocketPath, libPath?: string): Promise<LibSystemd | undefined> => {
  if (!(await isSocket(socketPath))) return undefined;
  return loadLibSystemd(libPath);
};

/**
 * A journal field name for a log field key: `controller` → CONTROLLER, `reconcileId` → RECONCILE_ID.
 * Journal names are `[A-Z0-9_]`, start with a letter, at most 64 characters; keys that map to
 * nothing, or to a name journald reserves for itself, return undefined.
 */
export const journalFieldName = (key: string): string | undefined => {
  const name = key
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toUpperCase()
    .replace(/[^A-Z0-9_]/g, "_")
    .replace(/^[^A-Z]+/, "")
    .slice(0, 64);
  if (name === "" || name === "MESSAGE" || name === "PRIORITY" || name === "SYSLOG_IDENTIFIER") return undefined;
  return name;
};

const valueText = (value: unknown): string => {
  if (typeof value === "string") return value;
  if (value instanceof Error) return errorText(value);
  return JSON.stringify(value, (_k, x: unknown) => (typeof x === "bigint" ? x.toString() : x instanceof Error ? errorText(x) : x)) ?? "";
};

/**
 * The `FIELD=value` list for one record. MESSAGE carries the whole formatted line (like the Go
 * agent's stdout under StandardOutput=journal), so log shippers that parse it see the same text.
 */
export const journalFields = (r: LogRecord, format: LogFormat, identifier = defaultSyslogIdentifier): string[] => {
  const fields = [`MESSAGE=${formatRecord(r, format)}`, `PRIORITY=${syslogPriority[r.severity]}`, `SYSLOG_IDENTIFIER=${identifier}`];
  for (const [k, v] of Object.entries(r.fields)) {
    const name = journalFieldName(k === "err" ? "error" : k);
    if (name !== undefined && v !== undefined) fields.push(`${name}=${valueText(v)}`);
  }
  return fields;
};

export interface JournalSinkOptions {
  /** From loadLibSystemd(); undefined → every record goes to the fallback. */
  readonly lib: LibSystemd | undefined;
  /** Where records go when the journal cannot take them (as `<N>`-prefixed lines). */
  readonly fallback: LineWriter;
  readonly format: LogFormat;
  readonly identifier?: string;
}

/**
 * journald's native protocol via sd_journal_sendv; a record the journal refuses (no libsystemd, no
 * /run/systemd/journal/socket) is written to the fallback with a syslog priority prefix instead.
 */
export const createJournalSink = (o: JournalSinkOptions): LogSink => ({
  write(r) {
    if (o.lib !== undefined && o.lib.journalSendv(journalFields(r, o.format, o.identifier)) >= 0) return;
    o.fallback.write(`<${syslogPriority[r.severity]}>${formatRecord(r, o.format)}\n`);
  },
});
