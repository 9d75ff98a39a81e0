import { lstatSync, readdirSync } from "node:fs";
import type { Dirent, Stats } from "node:fs";
import { constants } from "node:fs";
import { chmod, link, lstat, mkdir, open, readFile, readdir, rename, rm, stat, statfs, symlink, unlink } from "node:fs/promises";
import { resolve as resolveAbsolute } from "node:path";
import { hasErrno } from "./errno.ts";
import { hostSegments, joinUnderRoot, resolveSegments, walkSegments } from "./resolve.ts";
import { loadAttributeFlags, type ReadAttributeFlags } from "./attribute-flags.ts";
import { loadSyncfs, type Syncfs } from "./syncfs.ts";
import { HostFileKindError, HostPathError, stampOf } from "./types.ts";
import type { FileInfo, FileStamp, FileWrite, HostFs } from "./types.ts";
import { isOwnTempName, tempNameFor, tempNamer } from "./temp-names.ts";
import { isChunked, writeTempChunked } from "./write-chunked.ts";
import { fsyncDir, holdReplaced, processUmask, releaseAll, type StagedWrite, writeGroup, writeTemp } from "./write-group.ts";

/** Read size of `sha256`: big enough for few calls, small enough to stay out of the peak. */
const digestPieceBytes = 1024 * 1024;

const DIR_MODE = 0o755;

export interface HostFsOptions {
  /**
   * How group writes make contents durable: "auto" (default) syncfs(2) from libc when it is there,
   * "off" fsync per file, or a given function (tests).
   */
  readonly syncfs?: "auto" | "off" | Syncfs;
}

/**
 * HostFs over the real filesystem under `root` ("/" on a node, a temp dir in tests).
 * Symlinks are resolved inside the root like `systemctl --root` (absolute targets are re-rooted,
 * relative targets climbing out of the root are rejected). The check runs before each operation (while an
 * apply holds the memo, a parent directory's once per apply: holdPathMemo); a concurrent attacker swapping
 * links in between is outside this module's threat model (the agent runs as root on a host it owns).
 */
export function createHostFs(root: string, options: HostFsOptions = {}): HostFs {
  if (!root.startsWith("/")) throw new HostPathError(root, "root must be absolute");
  const base = resolveAbsolute(root);

  const dirs = new ResolvedDirs();
  /**
   * resolveSegments, through the directories remembered while an apply holds the memo (holdPathMemo): a path's
   * parent is walked once, then each path below it costs one lstat at most (for its last component, when followed).
   */
  const resolvePath = (path: string, followFinal: boolean): string[] => {
    if (!dirs.held) return resolveSegments(base, path, followFinal);
    const segments = hostSegments(path);
    const name = segments.pop();
    if (name === undefined) return [];
    const parentKey = segments.join("/");
    const key = parentKey === "" ? name : `${parentKey}/${name}`;
    if (followFinal) {
      const known = dirs.get(key);
      if (known !== undefined) return [...known];
    }
    let parent = dirs.get(parentKey);
    if (parent === undefined) {
      let walked: ReturnType<typeof walkSegments>;
      try {
        walked = walkSegments(base, `/${parentKey}`, true);
      } catch {
        return resolveSegments(base, path, followFinal); // the same failure, named after the path asked
      }
      if (!walked.allDirs) return resolveSegments(base, path, followFinal);
      parent = walked.segments;
      dirs.set(parentKey, parent);
    }
    const resolved = [...parent, name];
    if (!followFinal) return resolved;
    const info = lstatSync(joinUnderRoot(base, resolved), { throwIfNoEntry: false });
    if (info?.isSymbolicLink()) return resolveSegments(base, path, true);
    if (info?.isDirectory()) dirs.set(key, [...resolved]);
    return resolved;
  };

  /** Real path with every link resolved, the last one too. */
  const follow = (path: string): string => joinUnderRoot(base, resolvePath(path, true));
  /**
   * `read` on the real path of a regular file; undefined when there is none. Anything else is refused
   * before it is opened: opening a FIFO for reading blocks until a writer appears (for ever), a device may never end.
   */
  const readRegular = async <T>(path: string, read: (real: string, info: Stats) => Promise<T>): Promise<T | undefined> => {
    try {
      const real = follow(path);
      const info = await stat(real);
      if (info.isDirectory()) throw new HostFileKindError(path, "dir", "read");
      if (!info.isFile()) throw new HostFileKindError(path, "other", "read");
      return await read(real, info);
    } catch (err) {
      if (hasErrno(err, "ENOENT", "ENOTDIR")) return undefined;
      if (hasErrno(err, "EISDIR")) throw new HostFileKindError(path, "dir", "read");
      throw err;
    }
  };
  /** Real path with links resolved in the parents only; the last component is taken as it is. */
  const noFollow = (path: string): string => joinUnderRoot(base, resolvePath(path, false));

  async function lstatOrUndefined(real: string): Promise<Stats | undefined> {
    try {
      return await lstat(real);
    } catch (err) {
      if (hasErrno(err, "ENOENT", "ENOTDIR")) return undefined;
      throw err;
    }
  }

  /** Synchronous on purpose for group members (one cheap syscall; see write-group.ts). */
  function lstatSyncOrUndefined(real: string): Stats | undefined {
    try {
      // A missing file is no exception: a 5,000-file first apply otherwise leaves 5,000 errors to collect.
      return lstatSync(real, { throwIfNoEntry: false });
    } catch (err) {
      if (hasErrno(err, "ENOENT", "ENOTDIR")) return undefined;
      throw err;
    }
  }

  /** mkdir -p under the root with exact modes on the directories it creates. */
  async function mkdirs(path: string, mode: number): Promise<void> {
    const segments = resolvePath(path, true);
    for (let i = 1; i <= segments.length; i++) {
      const real = joinUnderRoot(base, segments.slice(0, i));
      const info = await lstatOrUndefined(real);
      if (info?.isDirectory()) continue;
      if (info !== undefined) throw new HostFileKindError(`/${segments.slice(0, i).join("/")}`, kindOf(info), "create directory");
      try {
        await mkdir(real, { mode });
      } catch (err) {
        // Lost a race against another creator: fine as long as it is a directory now.
        if (hasErrno(err, "EEXIST") && (await lstatOrUndefined(real))?.isDirectory()) continue;
        throw err;
      }
      await chmod(real, mode); // mkdir's mode is filtered by the umask
    }
  }

  /** A file write may replace what is at `path` (nothing, a regular file, or a link, replaced without following it). */
  function checkReplaceable(path: string, existing: EntryKind | undefined): void {
    if (existing !== undefined && !existing.isFile() && !existing.isSymbolicLink()) {
      throw new HostFileKindError(path, kindOf(existing), "write file");
    }
    if (existing?.isSymbolicLink()) dirs.forget(); // the rename replaces a link a remembered path may go through
  }

  /**
   * Checks a file target (absent, a regular file or a symlink, which rename replaces without
   * following) and creates its parents; `created` remembers parents made earlier in the same group.
   */
  async function prepareTarget(
    path: string,
    created: Set<string>,
    group?: GroupLookups,
  ): Promise<{ dirReal: string; target: string; temp: string; replacesFile: boolean }> {
    const segments = group === undefined ? resolvePath(path, false) : resolveViaParent(path, group.parents);
    const name = segments.at(-1);
    if (name === undefined) throw new HostPathError(path, "is the root directory");
    const dirReal = joinUnderRoot(base, segments.slice(0, -1));
    const target = joinUnderRoot(dirReal, [name]);
    const existing = group === undefined ? lstatSyncOrUndefined(target) : group.entries.kindOf(path, dirReal, name, target);
    checkReplaceable(path, existing);
    const dirPath = `/${segments.slice(0, -1).join("/")}`;
    // The segments are resolved already: an existing directory there needs no mkdir -p walk.
    if (!created.has(dirPath) && lstatSyncOrUndefined(dirReal)?.isDirectory() !== true) await mkdirs(dirPath, DIR_MODE);
    created.add(dirPath);
    return stagedEntry(dirReal, name, target, existing, group?.tempName);
  }

  /** The temp beside a checked target (remembered as in flight), and what the rename will replace. */
  function stagedEntry(
    dirReal: string,
    name: string,
    target: string,
    existing: EntryKind | undefined,
    tempName: (name: string) => string = tempNameFor,
  ): { dirReal: string; target: string; temp: string; replacesFile: boolean } {
    const temp = joinUnderRoot(dirReal, [tempName(name)]);
    inFlight.add(temp);
    return { dirReal, target, temp, replacesFile: existing?.isFile() === true };
  }

  /**
   * Checks every target of a group (and creates its parents) before the first byte is written; `staged`
   * is the caller's, so that the temps of a group that failed half-way are still forgotten.
   */
  async function stageAll(files: readonly FileWrite[], staged: StagedWrite[]): Promise<void> {
    const created = new Set<string>();
    const group: GroupLookups = {
      parents: new Map(),
      entries: new GroupEntries(files, lstatSyncOrUndefined),
      tempName: tempNamer(files.length),
    };
    // The real directory of each parent as members spell it, once the first member there was fully checked.
    const checkedParents = new Map<string, string>();
    for (const f of files) {
      const cut = f.path.lastIndexOf("/");
      const name = f.path.slice(cut + 1);
      const dirReal = plainEntryName(name) && !f.path.includes("\0") ? checkedParents.get(f.path.slice(0, cut)) : undefined;
      if (dirReal === undefined) {
        const prepared = await prepareTarget(f.path, created, group);
        staged.push({ ...prepared, path: f.path, data: f.data, mode: f.mode, written: f.written, late: f.late });
        if (plainEntryName(name)) checkedParents.set(f.path.slice(0, cut), prepared.dirReal);
        continue;
      }
      // The same parent string as a member checked in full: its resolution and directory stand, only the entry is new.
      const target = joinUnderRoot(dirReal, [name]);
      const existing = group.entries.kindOf(f.path, dirReal, name, target);
      checkReplaceable(f.path, existing);
      const entry = stagedEntry(dirReal, name, target, existing, group.tempName);
      staged.push({ ...entry, path: f.path, data: f.data, mode: f.mode, written: f.written, late: f.late });
    }
  }

  /**
   * resolveSegments(path, false) for a group member: the parent is resolved (links followed, as they are
   * for every non-final component) once per parent directory of the group, then the name is appended
   * as it is. A 1000-file group in 10 directories took ~4 lstat calls per file, now 4 per directory.
   */
  function resolveViaParent(path: string, parents: Map<string, readonly string[]>): string[] {
    const segments = hostSegments(path);
    const name = segments.pop();
    if (name === undefined) return [];
    const parentPath = `/${segments.join("/")}`;
    let parent = parents.get(parentPath);
    if (parent === undefined) {
      try {
        parent = resolvePath(parentPath, true);
      } catch {
        // The same failure, named after the file as callers know it.
        return resolveSegments(base, path, false);
      }
      parents.set(parentPath, parent);
    }
    return [...parent, name];
  }

  /** Temp files this instance is writing right now: a clean-up running meanwhile leaves them alone. */
  const inFlight = new InFlightTemps();

  let syncfsLoad: Promise<Syncfs | undefined> | undefined;
  let readFlags: Promise<ReadAttributeFlags> | undefined;
  const syncer = (): Promise<Syncfs | undefined> => (syncfsLoad ??= pickSyncfs(options.syncfs));

  const fs: HostFs = {
    root: base,
    resolve: follow,
    holdPathMemo: () => dirs.hold(),

    readFile: (path) => readRegular(path, readBytes),

    readFileAndMode: (path) => readRegular(path, async (real, info) => ({ bytes: await readBytes(real), mode: info.mode & 0o7777 })),

    sha256: (path) =>
      readRegular(path, async (real) => {
        const handle = await open(real, constants.O_RDONLY);
        try {
          const hasher = new Bun.CryptoHasher("sha256");
          const piece = new Uint8Array(digestPieceBytes);
          for (;;) {
            const { bytesRead } = await handle.read(piece, 0, piece.length, null);
            if (bytesRead === 0) break;
            hasher.update(piece.subarray(0, bytesRead));
          }
          return hasher.digest("hex");
        } finally {
          await handle.close();
        }
      }),

    async stamp(path) {
      try {
        return stampOf(await stat(follow(path), { bigint: true }));
      } catch (err) {
        if (hasErrno(err, "ENOENT", "ENOTDIR")) return undefined;
        throw err;
      }
    },

    async readText(path) {
      const bytes = await fs.readFile(path);
      return bytes === undefined ? undefined : new TextDecoder().decode(bytes);
    },

    async writeFileAtomic(path, data, mode, opts) {
      const durable = opts?.durable ?? true;
      const { dirReal, target, temp, replacesFile } = await prepareTarget(path, new Set());
      let stamp: FileStamp | undefined;
      try {
        stamp = isChunked(data)
          ? await writeTempChunked(path, temp, data, mode, durable)
          : await writeTemp(temp, data, mode, durable, durable ? undefined : processUmask());
        const held = replacesFile ? holdReplaced(target) : undefined; // see writeGroup: the old file's blocks are freed off the rename's path
        try {
          await renameOver(temp, target, path);
        } finally {
          releaseAll(held === undefined ? [] : [held]);
        }
      } finally {
        inFlight.delete(temp);
      }
      if (durable) await fsyncDir(dirReal);
      return stamp;
    },

    async writeFilesAtomic(files) {
      const staged: StagedWrite[] = [];
      try {
        await stageAll(files, staged);
        if (staged.length === 0) return;
        // One file gains nothing from syncfs and should not pay for other writers' dirty pages.
        await writeGroup(staged, staged.length > 1 ? await syncer() : undefined);
      } finally {
        for (const s of staged) inFlight.delete(s.temp);
      }
    },

    async writeFilesInPlace(files) {
      const staged: StagedWrite[] = [];
      try {
        await stageAll(files, staged);
        if (staged.length === 0) return { durable: Promise.resolve() };
        const { entries } = await writeGroup(staged, staged.length > 1 ? await syncer() : undefined, true);
        return { durable: entries };
      } finally {
        for (const s of staged) inFlight.delete(s.temp);
      }
    },

    async removeStaleTemps(path, listed) {
      const names =
        listed !== undefined
          ? [...listed]
          : await fs.list(path).catch((err: unknown) => {
              // Not a directory: nothing of ours can be in it.
              if (err instanceof HostFileKindError) return undefined;
              throw err;
            });
      const removed: string[] = [];
      const dir = path.endsWith("/") ? path : `${path}/`;
      for (const name of names ?? []) {
        // A temp of a group being written right now is skipped by its name, before its path is resolved
        // (the apply runs this clean-up alongside a group that may hold a thousand temps).
        // A given name is an entry name: one with a slash would reach into another directory.
        if (!isOwnTempName(name) || name.includes("/") || inFlight.hasName(name)) continue;
        const real = noFollow(`${dir}${name}`);
        if (inFlight.has(real)) continue;
        const info = await lstatOrUndefined(real);
        // Temps are regular files (writes) or symlinks (symlink()); a directory by that name is not ours.
        if (info === undefined || !(info.isFile() || info.isSymbolicLink())) continue;
        if (info.isSymbolicLink()) dirs.forget();
        try {
          await unlink(real);
          removed.push(`${dir}${name}`);
        } catch (err) {
          if (!hasErrno(err, "ENOENT")) throw err; // removed concurrently
        }
      }
      return removed;
    },

    async remove(path) {
      const real = noFollow(path);
      const info = await lstatOrUndefined(real);
      if (info === undefined) return false;
      if (info.isDirectory()) throw new HostFileKindError(path, "dir", "remove");
      if (info.isSymbolicLink()) dirs.forget();
      try {
        await unlink(real);
        return true;
      } catch (err) {
        if (hasErrno(err, "ENOENT")) return false; // removed concurrently
        throw err;
      }
    },

    async removeAll(path) {
      const real = noFollow(path);
      if (real === base) throw new HostPathError(path, "refusing to remove the root");
      // Usually there is nothing (a unit without drop-ins): one lstat instead of a recursive rm.
      if (lstatSyncOrUndefined(real) === undefined) return;
      dirs.forget();
      await rm(real, { recursive: true, force: true });
    },

    async ensureDir(path, mode = DIR_MODE) {
      await mkdirs(path, mode);
    },

    async list(path) {
      try {
        return (await readdir(follow(path))).sort();
      } catch (err) {
        if (hasErrno(err, "ENOENT")) return undefined;
        if (hasErrno(err, "ENOTDIR")) throw new HostFileKindError(path, "file", "list");
        throw err;
      }
    },

    async listKinds(path) {
      const real = follow(path);
      let entries: Dirent[];
      try {
        entries = await readdir(real, { withFileTypes: true });
      } catch (err) {
        if (hasErrno(err, "ENOENT")) return undefined;
        if (hasErrno(err, "ENOTDIR")) throw new HostFileKindError(path, "file", "list");
        throw err;
      }
      const kinds = new Map<string, FileInfo["kind"]>();
      for (const e of entries) {
        // A filesystem without d_type reports no kind: ask lstat for that entry.
        const known =
          e.isFile() || e.isDirectory() || e.isSymbolicLink() || e.isFIFO() || e.isSocket() || e.isCharacterDevice() || e.isBlockDevice();
        const info = known ? e : await lstatOrUndefined(`${real}/${e.name}`);
        if (info !== undefined) kinds.set(e.name, kindOf(info));
      }
      return kinds;
    },

    async stat(path) {
      const info = await lstatOrUndefined(noFollow(path));
      if (info === undefined) return undefined;
      return { kind: kindOf(info), mode: info.mode & 0o7777, size: info.size, links: info.nlink } satisfies FileInfo;
    },

    async attributeFlags(path) {
      readFlags ??= loadAttributeFlags();
      return (await readFlags)(noFollow(path));
    },

    async attributeFlagsIn(dir, names) {
      readFlags ??= loadAttributeFlags();
      const read = await readFlags;
      const dirReal = follow(dir);
      const entries = names.map((name) => {
        if (name === "" || name === "." || name === ".." || name.includes("/") || name.includes("\0"))
          throw new HostPathError(`${dir}/${name}`, "not an entry name");
        return read(`${dirReal}/${name}`);
      });
      return { dir: read(dirReal), entries };
    },

    async chmod(path, mode) {
      await chmod(follow(path), mode & 0o7777);
    },

    async linkAtomic(from, path, mode) {
      const source = noFollow(from);
      const { dirReal, target, temp } = await prepareTarget(path, new Set());
      try {
        await link(source, temp);
        await renameOver(temp, target, path, () => chmod(temp, mode & 0o7777));
      } finally {
        inFlight.delete(temp);
      }
      await fsyncDir(dirReal);
    },

    async symlink(target, path) {
      dirs.forget(); // replaces what is at `path`, which a remembered path may go through
      const segments = resolvePath(path, false);
      const name = segments.at(-1);
      if (name === undefined) throw new HostPathError(path, "is the root directory");
      const real = joinUnderRoot(base, segments);
      const existing = await lstatOrUndefined(real);
      if (existing?.isDirectory()) throw new HostFileKindError(path, "dir", "replace with a symlink");
      await mkdirs(`/${segments.slice(0, -1).join("/")}`, DIR_MODE);
      const dirReal = joinUnderRoot(base, segments.slice(0, -1));
      const temp = `${dirReal}/${tempNameFor(name)}`;
      inFlight.add(temp);
      try {
        await symlink(target, temp);
        await rename(temp, real);
      } catch (err) {
        await unlink(temp).catch(() => undefined); // best effort; the original error matters
        throw err;
      } finally {
        inFlight.delete(temp);
      }
    },

    async freeBytes(path) {
      try {
        const s = await statfs(follow(path));
        return s.bavail * s.bsize;
      } catch (err) {
        if (hasErrno(err, "ENOENT", "ENOTDIR")) return undefined;
        throw err;
      }
    },
  };
  return fs;
}

async function readBytes(real: string): Promise<Uint8Array> {
  const b = await readFile(real);
  // A view, not a copy: last-applied of a big OSC is tens of megabytes, read on every reconcile (issue 27).
  return new Uint8Array(b.buffer, b.byteOffset, b.length);
}

/**
 * Directories resolved while an apply holds the memo: host path (segments joined, no leading slash) → real
 * segments under the root, for paths whose every component existed as a directory (links followed). A memo
 * of what exists stays true until something is removed or replaced, so every HostFs call that removes or
 * replaces a link or a directory forgets it all (creating entries changes no resolution remembered). It is
 * dropped when the last holder lets go, so a change made by another process outlives it by one apply at most:
 * the same threat model as the check before each operation (createHostFs).
 */
class ResolvedDirs {
  #holders = 0;
  readonly #dirs = new Map<string, readonly string[]>();

  get held(): boolean {
    return this.#holders > 0;
  }

  hold(): () => void {
    this.#holders++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.#holders === 0) this.#dirs.clear();
    };
  }

  get(key: string): readonly string[] | undefined {
    return this.#dirs.get(key);
  }

  set(key: string, segments: readonly string[]): void {
    this.#dirs.set(key, segments);
  }

  forget(): void {
    this.#dirs.clear();
  }
}

/** A name that is one directory entry as it stands (hostSegments would neither drop nor refuse it). */
const plainEntryName = (name: string): boolean => name !== "" && name !== "." && name !== "..";

/** What the members of one group share while they are checked: resolved parents, and the directories' entries. */
interface GroupLookups {
  readonly parents: Map<string, readonly string[]>;
  readonly entries: GroupEntries;
  /** The group's temp names (tempNamer). */
  readonly tempName: (name: string) => string;
}

/** Members a group must have in one directory before that directory is read once instead of an lstat per member. */
const LISTED_MEMBERS = 32;

/** What a target is, as lstat tells it: the methods a member's check asks. */
type EntryKind = Pick<Stats, "isFile" | "isDirectory" | "isSymbolicLink">;

const hostDirOf = (path: string): string => path.slice(0, path.lastIndexOf("/"));

/**
 * What sits at each group member's target, for the check before the first write: an lstat per member, or, for a
 * directory holding many members, one readdir with the entries' types (d_type: the kind lstat reports) when it
 * is first asked; measured: 1000 members in 10 directories took ~6 ms of lstat calls. An entry whose type the
 * file system leaves unknown, and a directory that cannot be read (but missing: nothing is there), go to lstat.
 */
class GroupEntries {
  /** Host directories (as the members name them) with enough members to be read whole. */
  readonly #many = new Set<string>();
  readonly #listed = new Map<string, ReadonlyMap<string, Dirent> | undefined>();

  constructor(
    files: readonly FileWrite[],
    private readonly lstat: (real: string) => EntryKind | undefined,
  ) {
    const perDir = new Map<string, number>();
    for (const f of files) {
      const dir = hostDirOf(f.path);
      const n = (perDir.get(dir) ?? 0) + 1;
      perDir.set(dir, n);
      if (n === LISTED_MEMBERS) this.#many.add(dir);
    }
  }

  /** What is at `target`, entry `name` of the real directory `dirReal`, to which member `path` resolved its parent. */
  kindOf(path: string, dirReal: string, name: string, target: string): EntryKind | undefined {
    if (!this.#many.has(hostDirOf(path))) return this.lstat(target);
    if (!this.#listed.has(dirReal)) this.#listed.set(dirReal, readEntries(dirReal));
    const listed = this.#listed.get(dirReal);
    if (listed === undefined) return this.lstat(target);
    const entry = listed.get(name);
    if (entry === undefined) return undefined;
    const typed =
      entry.isFile() ||
      entry.isDirectory() ||
      entry.isSymbolicLink() ||
      entry.isFIFO() ||
      entry.isSocket() ||
      entry.isCharacterDevice() ||
      entry.isBlockDevice();
    return typed ? entry : this.lstat(target); // no d_type on this file system
  }
}

/** The entries of a real directory by name; none when it is missing; undefined when lstat is to answer instead. */
function readEntries(dirReal: string): ReadonlyMap<string, Dirent> | undefined {
  try {
    return new Map(readdirSync(dirReal, { withFileTypes: true }).map((e) => [e.name, e]));
  } catch (err) {
    // Missing, or not a directory (the member's mkdir -p names it): nothing is there, as lstat says.
    if (hasErrno(err, "ENOENT", "ENOTDIR")) return new Map();
    return undefined;
  }
}

/** Real paths of the temps being written, with their names counted (names are random, so nearly always unique). */
class InFlightTemps {
  readonly #paths = new Set<string>();
  readonly #names = new Map<string, number>();

  add(path: string): void {
    if (this.#paths.has(path)) return;
    this.#paths.add(path);
    const name = path.slice(path.lastIndexOf("/") + 1);
    this.#names.set(name, (this.#names.get(name) ?? 0) + 1);
  }

  delete(path: string): void {
    if (!this.#paths.delete(path)) return;
    const name = path.slice(path.lastIndexOf("/") + 1);
    const n = (this.#names.get(name) ?? 1) - 1;
    if (n > 0) this.#names.set(name, n);
    else this.#names.delete(name);
  }

  has(path: string): boolean {
    return this.#paths.has(path);
  }

  hasName(name: string): boolean {
    return this.#names.has(name);
  }
}

/**
 * The last step of an atomic write: `before` (if any) on the finished temp, then the rename over `target`.
 * On failure the temp goes (best effort; the original error matters), and a directory at `path` is named as such.
 */
async function renameOver(temp: string, target: string, path: string, before?: () => Promise<void>): Promise<void> {
  try {
    await before?.();
    await rename(temp, target);
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    if (hasErrno(err, "EISDIR")) throw new HostFileKindError(path, "dir", "write file");
    throw err;
  }
}

function pickSyncfs(choice: HostFsOptions["syncfs"]): Promise<Syncfs | undefined> {
  if (choice === "off") return Promise.resolve(undefined);
  if (typeof choice === "function") return Promise.resolve(choice);
  return loadSyncfs();
}

function kindOf(info: Pick<Stats, "isFile" | "isDirectory" | "isSymbolicLink">): FileInfo["kind"] {
  if (info.isFile()) return "file";
  if (info.isDirectory()) return "dir";
  if (info.isSymbolicLink()) return "symlink";
  return "other";
}
