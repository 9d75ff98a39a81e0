import { mkdir } from "node:fs/promises";
import { join } from "node:path";

/** One journal entry as a unit (or systemd about it) would have logged it. */
export interface JournalSeed {
  readonly unit: string;
  readonly message: string;
  /** Wall-clock ms of the entry. */
  readonly atMs: number;
  readonly identifier?: string;
  readonly pid?: number;
}

/** Where Debian/Ubuntu install it (package systemd-journal-remote). */
const journalRemote = ["/lib/systemd/systemd-journal-remote", "/usr/lib/systemd/systemd-journal-remote"];
const machineId = "5eed0000000000000000000000000001";
const bootId = "b0070000000000000000000000000001";
/** Wall-clock µs the double's boot started at (2020-01-01): entries are written with times after it. */
const bootStartUsec = 1_577_836_800_000_000n;

/** A field in journal export format; values with a newline take the binary form (name, LE64 size, bytes). */
function field(name: string, value: string): Uint8Array {
  const enc = new TextEncoder();
  if (!value.includes("\n")) return enc.encode(`${name}=${value}\n`);
  const data = enc.encode(value);
  const size = new Uint8Array(8);
  new DataView(size.buffer).setBigUint64(0, BigInt(data.byteLength), true);
  return Buffer.concat([enc.encode(`${name}\n`), size, data, enc.encode("\n")]);
}

let fileIndex = 0;

/**
 * Writes real journald files under `<root>/var/log/journal/<machine-id>/`, as journald on the node
 * would have: the entries go through systemd-journal-remote (journal export format in, journal file
 * out), so the agent reads them with libsystemd's sd-journal like any journal. Each call adds one
 * file; readers merge the files by time.
 */
export async function writeJournal(root: string, entries: readonly JournalSeed[]): Promise<void> {
  const binary = journalRemote.find((p) => Bun.file(p).size > 0);
  if (binary === undefined) throw new Error("systemd-journal-remote is not installed (make host-deps installs it)");
  const dir = join(root, "var/log/journal", machineId);
  await mkdir(dir, { recursive: true });
  const parts: Uint8Array[] = [];
  for (const e of entries) {
    parts.push(
      field("__REALTIME_TIMESTAMP", String(BigInt(Math.round(e.atMs)) * 1000n)),
      // One boot for every file: readers order its entries by monotonic time, so it follows the wall clock.
      field("__MONOTONIC_TIMESTAMP", String(BigInt(Math.round(e.atMs)) * 1000n - bootStartUsec)),
      field("_BOOT_ID", bootId),
      field("_MACHINE_ID", machineId),
      field("_SYSTEMD_UNIT", e.unit),
      field("SYSLOG_IDENTIFIER", e.identifier ?? e.unit.replace(/\.service$/, "")),
      field("_PID", String(e.pid ?? 4242)),
      field("MESSAGE", e.message),
      new TextEncoder().encode("\n"),
    );
  }
  fileIndex += 1;
  // journal-remote wants a name ending in .journal; system@… is how rotated journald files are named.
  const out = join(dir, `system@support-${process.pid}-${fileIndex}.journal`);
  const proc = Bun.spawn([binary, `--output=${out}`, "-"], { stdin: Buffer.concat(parts), stdout: "ignore", stderr: "pipe" });
  const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
  if (code !== 0) throw new Error(`systemd-journal-remote failed (${code}): ${stderr.trim()}`);
}
