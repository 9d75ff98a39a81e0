import type { Library, Pointer } from "bun:ffi";

/**
 * Reading journald's files through libsystemd's sd-journal API (bun:ffi), newest entry first, the way
 * `journalctl --root R -u UNIT --since T -r` does. Imported lazily (`await import`) by `support` only:
 * the agent never maps it at start-up.
 */

export interface JournalEntry {
  /** Microseconds since the epoch (wall clock of the entry). */
  readonly realtimeUsec: bigint;
  /** Field name → value (text), for the fields asked for. */
  readonly fields: Readonly<Record<string, string>>;
}

export interface JournalQuery {
  /** Host root: the journal files under <root>/var/log/journal and <root>/run/log/journal are read. */
  readonly root: string;
  /** Entries of any of these units: `_SYSTEMD_UNIT=u` (what the unit logged) or `UNIT=u` (what systemd logged about it). */
  readonly units: readonly string[];
  /** Entries at or after this wall-clock time (ms since the epoch). */
  readonly sinceMs: number;
  /** Fields to read of each entry (MESSAGE, _SYSTEMD_UNIT, …). */
  readonly fields: readonly string[];
}

class JournalReadError extends Error {
  override readonly name = "JournalReadError";
}

/** sd_journal_open flags (sd-journal.h). */
const SD_JOURNAL_LOCAL_ONLY = 1;
const SD_JOURNAL_SYSTEM = 4;
const SD_JOURNAL_OS_ROOT = 16;

const errnoText = (rc: number): string => {
  const names: Record<number, string> = { 2: "ENOENT", 13: "EACCES", 12: "ENOMEM", 22: "EINVAL", 74: "EBADMSG" };
  return names[-rc] ?? `errno ${-rc}`;
};

/**
 * The matching entries, newest first, handed to `take` one by one until it returns false (a size bound
 * reached) or the entries end or get older than `sinceMs`. Throws JournalReadError when libsystemd is
 * missing or the journal cannot be opened; entries already handed out stay handed out.
 */
export async function readJournalNewestFirst(
  q: JournalQuery,
  take: (e: JournalEntry) => boolean,
  libPath = "libsystemd.so.0",
): Promise<void> {
  const ffi = await import("bun:ffi");
  const { ptr, toArrayBuffer, FFIType: T } = ffi;
  const symbols = {
    sd_journal_open: { args: [T.ptr, T.i32], returns: T.i32 },
    sd_journal_open_directory: { args: [T.ptr, T.cstring, T.i32], returns: T.i32 },
    sd_journal_add_match: { args: [T.ptr, T.ptr, T.u64], returns: T.i32 },
    sd_journal_add_disjunction: { args: [T.ptr], returns: T.i32 },
    sd_journal_seek_tail: { args: [T.ptr], returns: T.i32 },
    sd_journal_previous: { args: [T.ptr], returns: T.i32 },
    sd_journal_get_realtime_usec: { args: [T.ptr, T.ptr], returns: T.i32 },
    sd_journal_get_data: { args: [T.ptr, T.cstring, T.ptr, T.ptr], returns: T.i32 },
    sd_journal_close: { args: [T.ptr], returns: T.void },
  } as const;
  let lib: Library<typeof symbols>;
  try {
    lib = ffi.dlopen(libPath, symbols);
  } catch (err) {
    throw new JournalReadError(`libsystemd is not available (${libPath})`, { cause: err });
  }
  const s = lib.symbols;
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  const cstr = (text: string) => encoder.encode(`${text}\0`);
  const out = new BigUint64Array(1);
  try {
    const rc =
      q.root === "/"
        ? s.sd_journal_open(ptr(out), SD_JOURNAL_LOCAL_ONLY | SD_JOURNAL_SYSTEM)
        : s.sd_journal_open_directory(ptr(out), ptr(cstr(q.root)), SD_JOURNAL_OS_ROOT);
    if (rc < 0) throw new JournalReadError(`cannot open the journal under ${q.root}: ${errnoText(rc)}`);
    const j = Number(out[0]) as Pointer;
    try {
      // Same-field matches are ORed; a disjunction ORs the two groups.
      for (const [i, field] of ["_SYSTEMD_UNIT", "UNIT"].entries()) {
        if (i > 0) s.sd_journal_add_disjunction(j);
        for (const unit of q.units) {
          const m = encoder.encode(`${field}=${unit}`);
          const r = s.sd_journal_add_match(j, ptr(m), m.byteLength);
          if (r < 0) throw new JournalReadError(`cannot filter the journal by unit ${unit}: ${errnoText(r)}`);
        }
      }
      s.sd_journal_seek_tail(j);
      const since = BigInt(Math.max(0, Math.floor(q.sinceMs))) * 1000n;
      const fieldNames = q.fields.map((f) => ({ name: f, c: cstr(f) }));
      const dataPtr = new BigUint64Array(1);
      const dataLen = new BigUint64Array(1);
      const usec = new BigUint64Array(1);
      for (;;) {
        const moved = s.sd_journal_previous(j);
        if (moved < 0) throw new JournalReadError(`cannot read the journal: ${errnoText(moved)}`);
        if (moved === 0) return;
        if (s.sd_journal_get_realtime_usec(j, ptr(usec)) < 0) continue;
        const realtimeUsec = usec[0] ?? 0n;
        if (realtimeUsec < since) return;
        const fields: Record<string, string> = {};
        for (const f of fieldNames) {
          if (s.sd_journal_get_data(j, ptr(f.c), ptr(dataPtr), ptr(dataLen)) < 0) continue;
          const len = Number(dataLen[0]);
          const bytes = new Uint8Array(toArrayBuffer(Number(dataPtr[0]) as Pointer, 0, len));
          // The data is `FIELD=value`; copy out before the next call reuses libsystemd's buffer.
          fields[f.name] = decoder.decode(bytes.subarray(f.name.length + 1));
        }
        if (!take({ realtimeUsec, fields })) return;
      }
    } finally {
      s.sd_journal_close(j);
    }
  } finally {
    lib.close();
  }
}
