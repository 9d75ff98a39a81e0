import { quoteName } from "../untrusted/index.ts";

/** What `stat` reports about a path under the root (links are not followed for `kind`). */
export interface FileInfo {
  readonly kind: "file" | "dir" | "symlink" | "other";
  readonly mode: number; // permission bits only, e.g. 0o644
  readonly size: number;
  /** Hard links to the inode (regular files; left out by doubles that do not model links). */
  readonly links?: number;
}

/**
 * Content pushed into a file chunk by chunk, in order, by one synchronous `writeTo` call: each chunk
 * is written before `write` returns (the producer may reuse its buffer), so no copy of the whole
 * exists (issue 27: last-applied and the change set of a big OSC). A `writeTo` that throws leaves no file behind.
 */
export interface ChunkedData {
  writeTo(write: (chunk: Uint8Array) => void): void;
}

/**
 * One version of a file as fstat/stat tell it, without reading it: an edit in place changes its size or
 * modification time, a replacement (rename, delete and create) its inode. An edit of the same size within
 * the file system's timestamp granularity of the last write keeps it (the caller's trade, see its use).
 */
export interface FileStamp {
  readonly dev: bigint;
  readonly ino: bigint;
  readonly size: bigint;
  readonly mtimeNs: bigint;
}

/** The stamp part of a stat (fstat) result taken with `{ bigint: true }`. */
export const stampOf = ({ dev, ino, size, mtimeNs }: FileStamp): FileStamp => ({ dev, ino, size, mtimeNs });

export const sameStamp = (a: FileStamp | undefined, b: FileStamp | undefined): boolean =>
  a !== undefined && b !== undefined && a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs;

/**
 * A group member's content: bytes, text (written as UTF-8), a function producing the bytes when the
 * member's temp is written, so that a large group holds only the few files in flight decoded at once,
 * or chunks pushed into the temp (ChunkedData).
 */
export type FileData = Uint8Array | string | (() => Uint8Array) | ChunkedData;

/** One file of a group write. */
export interface FileWrite {
  readonly path: string;
  readonly data: FileData;
  /** Exact permission bits (the umask does not apply). */
  readonly mode: number;
  /** Called once the member's temp write has ended (written or failed): bytes from `data()` may be reused then. */
  readonly written?: (() => void) | undefined;
  /** Its temp is written after the other members' (a big record encoded once their garbage can be collected). */
  readonly late?: boolean | undefined;
}

/**
 * The agent's only door to the host's files. Every path is an absolute host path ("/etc/x")
 * resolved under the root given at construction; relative paths and paths that escape the root
 * (through "..", or a symlink pointing outside) throw HostPathError.
 */
export interface HostFs {
  readonly root: string;
  /** The real path under the root for an absolute host path. */
  resolve(path: string): string;
  /**
   * Remembers the directories paths resolve through until the returned function is called (by every holder):
   * an apply walks each parent directory once instead of once per call. Whatever this HostFs removes or
   * replaces (a link, a directory) makes it forget; changes by other processes meanwhile are not seen.
   */
  holdPathMemo(): () => void;
  /** File bytes, or undefined when the file does not exist. */
  readFile(path: string): Promise<Uint8Array | undefined>;
  /** File text (UTF-8), or undefined when the file does not exist. */
  readText(path: string): Promise<string | undefined>;
  /** readFile with the permission bits of the file read (links followed, as readFile does). */
  readFileAndMode(path: string): Promise<{ readonly bytes: Uint8Array; readonly mode: number } | undefined>;
  /**
   * sha256 (hex) of the file's bytes, read in pieces (a file of tens of megabytes is never held at once),
   * or undefined when it does not exist. Kinds as for readFile.
   */
  sha256(path: string): Promise<string | undefined>;
  /** The stamp of the file at `path` (links followed, as readFile does), undefined when nothing is there. */
  stamp(path: string): Promise<FileStamp | undefined>;
  /**
   * Temp file in the same directory, exact mode (umask-independent), fsync, rename, fsync of the dir.
   * Parent directories are created 0755. Refuses to replace anything but a regular file.
   * `opts.durable: false` skips both fsyncs, for files whose loss in a crash costs nothing (a status
   * report): readers still see the old or the new file, never a mix; after a crash the file may be
   * the old one, the new one, or (on file systems that do not order data before a rename) empty.
   * ChunkedData is written as its producer hands the chunks over; a failure while writing names `path`.
   * Resolves with the written file's stamp, taken from the temp's descriptor before its rename (the file
   * now at `path` unless another process replaced it since); undefined for a non-durable write of bytes
   * or text, which has no descriptor of its own.
   */
  writeFileAtomic(
    path: string,
    data: Uint8Array | string | ChunkedData,
    mode: number,
    opts?: { readonly durable?: boolean },
  ): Promise<FileStamp | undefined>;
  /**
   * Writes a group of files, each atomically like writeFileAtomic, with one durability point for the
   * whole group: every target is checked and its parents created first, then all temp files are
   * written (exact modes), made durable together (syncfs(2) per filesystem, else fsync per file),
   * renamed into place, and the directory entries made durable (syncfs again, else fsync per
   * directory). At every instant each file is entirely old or entirely new. On failure some files
   * may already be new and no temp file is left behind; writing the same group again completes it.
   * Resolves only when every file of the group is on disk.
   */
  writeFilesAtomic(files: readonly FileWrite[]): Promise<void>;
  /**
   * writeFilesAtomic that resolves as soon as every file is in place with durable contents; `durable`
   * settles once the directory entries are durable too (or with the error that prevented it), so a
   * caller can go on and only wait for it before it records the files as written.
   */
  writeFilesInPlace(files: readonly FileWrite[]): Promise<{ readonly durable: Promise<void> }>;
  /** Removes a file or symlink; true when something was removed, false when it was already missing. */
  remove(path: string): Promise<boolean>;
  /** Removes a directory tree or file; missing is fine. */
  removeAll(path: string): Promise<void>;
  /** mkdir -p; new directories get `mode` (default 0o755), existing ones are left alone. */
  ensureDir(path: string, mode?: number): Promise<void>;
  /** Entry names of a directory, sorted; undefined when it does not exist. */
  list(path: string): Promise<string[] | undefined>;
  /**
   * Entry names of a directory with their kinds (links not followed, as `stat` reports them), from one
   * readdir; undefined when it does not exist.
   */
  listKinds(path: string): Promise<Map<string, FileInfo["kind"]> | undefined>;
  stat(path: string): Promise<FileInfo | undefined>;
  /**
   * The inode flags `lsattr` shows (FS_IOC_GETFLAGS) of the file or directory at `path`, the last
   * component not followed; undefined when it is missing, a symlink, or its file system has no such
   * flags (tmpfs, proc). Regular files and directories only: opening a device may have effects.
   */
  attributeFlags(path: string): Promise<number | undefined>;
  /**
   * attributeFlags of directory `dir` (its links followed inside the root) and of each entry `names` in it
   * (not followed), with `dir` resolved once: an apply asks this for every file of a directory.
   */
  attributeFlagsIn(
    dir: string,
    names: readonly string[],
  ): Promise<{ readonly dir: number | undefined; readonly entries: (number | undefined)[] }>;
  chmod(path: string, mode: number): Promise<void>;
  /**
   * Removes the temp files this agent's atomic writes leave in directory `path` when the process is
   * killed between writing and renaming (`.<name>.tmp-<12 hex>`, regular files and symlinks only),
   * except those this instance is writing right now. Nothing else is touched. Returns the removed
   * host paths; a missing directory has none. `listed`: the directory's entry names as read moments
   * before (an apply's planning lists the directories it writes into), instead of reading it again —
   * a temp a killed predecessor left was there already.
   */
  removeStaleTemps(path: string, listed?: Iterable<string>): Promise<string[]>;
  /**
   * Places the existing regular file `from` at `path` without copying: a hard link under a temp name next
   * to `path`, `mode` set on the (now shared) inode, renamed over `path`, directory fsynced. `path` is
   * checked as for writeFileAtomic. Throws the link's error (EXDEV, EPERM, …) with nothing changed.
   */
  linkAtomic(from: string, path: string, mode: number): Promise<void>;
  /** Creates or replaces a symlink at `path` pointing at `target` (target is stored verbatim). */
  symlink(target: string, path: string): Promise<void>;
  /** Bytes an unprivileged writer may still use on the file system holding `path`; undefined when it is missing. */
  freeBytes(path: string): Promise<number | undefined>;
}

export class HostPathError extends Error {
  override readonly name = "HostPathError";
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`invalid host path ${quoteName(path)}: ${reason}`);
  }
}

/** An operation met a file of the wrong kind, e.g. a directory where a regular file was to be written. */
export class HostFileKindError extends Error {
  override readonly name = "HostFileKindError";
  constructor(
    readonly path: string,
    readonly kind: FileInfo["kind"],
    operation: string,
  ) {
    super(`cannot ${operation} ${quoteName(path)}: it is a ${kind === "dir" ? "directory" : kind === "other" ? "non-regular file" : kind}`);
  }
}
