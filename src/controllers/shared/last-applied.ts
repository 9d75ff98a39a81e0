import { type FileStamp, type HostFs, sameStamp } from "../../host/index.ts";
import { decodeOsc, digestOsc, encodeOscChunked, type Osc, readYaml } from "../../osc/index.ts";
import { bigTextChars } from "../../text/index.ts";
import { lastAppliedPath } from "./state-paths.ts";

// The one reader (and writer) of last-applied-osc.yaml for every controller: the OSC controller
// writes it after each completed apply, the drift checks, the systemd unit check and `status` read
// it. (The consistency checker reads the same text with upstream's key casing on purpose, and keeps
// its own parse: oscchecker/last-applied.ts.)

interface Entry {
  /** sha256 of the text: a big OSC's text is tens of megabytes, and its decoded form already holds its strings. */
  readonly digest: string;
  /** The decoded OSC; for a big one (≥ bigTextChars) its digested form (osc/digest.ts), not its contents. */
  readonly osc: Osc;
  readonly digested: boolean;
  /** Whether the file itself names apiVersion and kind (decodeOsc defaults them); computed on demand. */
  typeMetaInFile?: boolean;
  /**
   * The file as writeLastApplied left it (its temp's fstat before the rename); undefined for an entry from a
   * read. While the file on disk has this stamp it is that file, and is neither hashed nor read.
   */
  readonly written?: FileStamp | undefined;
}

/**
 * The last-applied text this process wrote or read, with its decoded form: decoding a 1000-file OSC
 * costs ~100 ms, and every reconcile reads the file again. Only byte-identical text reuses the decoded
 * object (frozen, as callers share it); any edit on disk is decoded afresh. One entry per HostFs. The file
 * this process wrote is known by its stamp (device, inode, size, modification time) without hashing it (issue
 * 25: 3 ms of the 1000-file apply's planning); any other stamp, or an entry from a read, is hashed as before.
 * A big OSC's entry keeps its files' digests only: the next apply compares against them, and the few
 * readers that need old contents (drift repair, revert, in-place) decode the file again (issue 27).
 */
const memo = new WeakMap<HostFs, Entry>();

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

const digestOf = (data: Uint8Array): string => new Bun.CryptoHasher("sha256").update(data).digest("hex");

function remember(host: HostFs, digest: string, decoded: Osc, byteLength: number, written?: FileStamp): Entry {
  const digested = byteLength >= bigTextChars;
  const entry: Entry = { digest, osc: deepFreeze(digested ? digestOsc(decoded) : decoded), digested, written };
  memo.set(host, entry);
  return entry;
}

/**
 * The file's entry, and its bytes when it had to be read (for a reader that needs more than the decoded
 * form). The file is hashed in pieces first: an unchanged file (the usual case) is never held whole, and
 * a big OSC's is tens of megabytes beside the OSC being applied (issue 27).
 */
async function read(host: HostFs): Promise<{ readonly entry: Entry; readonly bytes?: Uint8Array; readonly decoded?: Osc } | undefined> {
  const known = memo.get(host);
  if (known !== undefined) {
    if (known.written !== undefined && sameStamp(await host.stamp(lastAppliedPath), known.written)) return { entry: known };
    const onDisk = await host.sha256(lastAppliedPath);
    if (onDisk === undefined) return undefined;
    if (onDisk === known.digest) return { entry: known };
  }
  const bytes = await host.readFile(lastAppliedPath);
  if (bytes === undefined) return undefined;
  const digest = digestOf(bytes);
  if (known?.digest === digest) return { entry: known, bytes };
  const decoded = decodeOsc(bytes);
  return { entry: remember(host, digest, decoded, bytes.length), bytes, decoded };
}

/** The last fully applied OSC with its file contents (read-only), undefined before the first complete apply. */
export async function readLastApplied(host: HostFs): Promise<Osc | undefined> {
  const found = await read(host);
  if (found === undefined || !found.entry.digested) return found?.entry.osc;
  if (found.decoded !== undefined) return found.decoded;
  const bytes = found.bytes ?? (await host.readFile(lastAppliedPath));
  return bytes === undefined ? undefined : decodeOsc(bytes);
}

/**
 * The last fully applied OSC for readers that only compare files (the planner, the disruption policy, the
 * stale-temp sweep): a big one's file inline data are digests (osc/digest.ts; compare with plan/equal.ts
 * sameFile), so its contents are not held beside the new OSC's during a re-apply.
 */
export async function readLastAppliedDigests(host: HostFs): Promise<Osc | undefined> {
  return (await read(host))?.entry.osc;
}

const named = (doc: unknown, key: string): boolean => {
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) return false;
  const v: unknown = (doc as Record<string, unknown>)[key];
  return typeof v === "string" && v !== "";
};

/**
 * The last-applied OSC and whether the file names `apiVersion` and `kind` itself, for readers that
 * decode it the way upstream does (without a target type, so nothing is defaulted). For units only:
 * a big OSC's file inline data are digests (readLastAppliedDigests).
 */
export async function readLastAppliedWithTypeMeta(
  host: HostFs,
): Promise<{ readonly osc: Osc; readonly typeMetaInFile: boolean } | undefined> {
  const found = await read(host);
  if (found === undefined) return undefined;
  const { entry } = found;
  if (entry.typeMetaInFile === undefined) {
    const bytes = found.bytes ?? (await host.readFile(lastAppliedPath));
    if (bytes === undefined) return undefined;
    const doc = readYaml(bytes);
    entry.typeMetaInFile = named(doc, "apiVersion") && named(doc, "kind");
  }
  return { osc: entry.osc, typeMetaInFile: entry.typeMetaInFile };
}

/**
 * Writes last-applied and remembers its decoded form (taken from the encoder, not by parsing the
 * text again), so the next reconcile need not decode it. The text never exists whole: the encoder
 * pushes it into the temp file through one reused buffer, and each chunk is hashed as it goes by
 * for the memo's digest (issue 27: a big OSC's text, its UTF-8 copy and the digest's were ~60 MB).
 * Returns the file's length in bytes (a big OSC's encoding leaves garbage the caller may collect).
 */
export async function writeLastApplied(host: HostFs, osc: Osc): Promise<number> {
  const { chunks, decoded } = encodeOscChunked(osc);
  const hasher = new Bun.CryptoHasher("sha256");
  let length = 0;
  const hashed = {
    writeTo(write: (chunk: Uint8Array) => void) {
      chunks.writeTo((chunk) => {
        write(chunk);
        hasher.update(chunk);
        length += chunk.length;
      });
    },
  };
  const written = await host.writeFileAtomic(lastAppliedPath, hashed, 0o600);
  // The encoder always writes apiVersion and kind: the unit check need not parse the file to learn that.
  remember(host, hasher.digest("hex"), decoded, length, written).typeMetaInFile = true;
  return length;
}
