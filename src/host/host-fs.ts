import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import type { Stats } from "node:fs";
import { chmod, lstat, mkdir, open, readFile, readdir, rename, rm, symlink, unlink } from "node:fs/promises";
import { resolve as resolveAbsolute } from "node:path";
import { hasErrno } from "./errno.ts";
import { joinUnderRoot, resolveSegments } from "./resolve.ts";
import { HostFileKindError, HostPathError } from "./types.ts";
import type { FileInfo, HostFs } from "./types.ts";

const DIR_MODE = 0o755;

/**
 * HostFs over the real filesystem under `root` ("/" on a node, a temp dir in tests).
 * Symlinks are resolved inside the root like `systemctl --root` (absolute targets are re-rooted,
 * relative targets climbing out of the root are rejected). The check runs before each operation;
 * a concurrent attacker swapping links in between is outside this module's threat model (the
 * agent runs as root on a host it owns).
 */
export function createHostFs(root: string): HostFs {
  if (!root.startsWith("/")) throw new HostPathError(root, "root must be absolute");
  const base = resolveAbsolute(root);

  /** Real path with every link resolved, the last one too. */
  const follow = (path: string): string => joinUnderRoot(base, resolveSegments(base, path, true));
  /** Real path with links resolved in the parents only; the last component is taken as it is. */
  const noFollow = (path: string): string => joinUnderRoot(base, resolveSegments(base, path, false));

  async function lstatOrUndefined(real: string): Promise<Stats | undefined> {
    try {
      return await lstat(real);
    } catch (err) {
      if (hasErrno(err, "ENOENT", "ENOTDIR")) return undefined;
      throw err;
    }
  }

  /** mkdir -p under the root with exact modes on the directories it creates. */
  async function mkdirs(path: string, mode: number): Promise<void> {
    const segments = resolveSegments(base, path, true);
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

  async function fsyncDir(real: string): Promise<void> {
    const handle = await open(real, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  const fs: HostFs = {
    root: base,
    resolve: follow,

    async readFile(path) {
      try {
        return new Uint8Array(await readFile(follow(path)));
      } catch (err) {
        if (hasErrno(err, "ENOENT", "ENOTDIR")) return undefined;
        if (hasErrno(err, "EISDIR")) throw new HostFileKindError(path, "dir", "read");
        throw err;
      }
    },

    async readText(path) {
      const bytes = await fs.readFile(path);
      return bytes === undefined ? undefined : new TextDecoder().decode(bytes);
    },

    async writeFileAtomic(path, data, mode) {
      const segments = resolveSegments(base, path, false);
      const name = segments.at(-1);
      if (name === undefined) throw new HostPathError(path, "is the root directory");
      const dirPath = `/${segments.slice(0, -1).join("/")}`;
      const target = joinUnderRoot(base, segments);
      const existing = await lstatOrUndefined(target);
      // A symlink at the target is replaced by the file (rename does not follow it).
      if (existing !== undefined && !existing.isFile() && !existing.isSymbolicLink()) {
        throw new HostFileKindError(path, kindOf(existing), "write file");
      }
      await mkdirs(dirPath, DIR_MODE);
      const dirReal = joinUnderRoot(base, segments.slice(0, -1));
      const temp = `${dirReal}/.${name}.tmp-${randomBytes(6).toString("hex")}`;
      const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
      let renamed = false;
      try {
        try {
          await handle.chmod(mode & 0o7777); // fchmod: exact mode, whatever the umask
          await handle.writeFile(data);
          await handle.sync();
        } finally {
          await handle.close();
        }
        await rename(temp, target);
        renamed = true;
        await fsyncDir(dirReal);
      } catch (err) {
        if (!renamed) await unlink(temp).catch(() => undefined); // best effort; the original error matters
        if (hasErrno(err, "EISDIR")) throw new HostFileKindError(path, "dir", "write file");
        throw err;
      }
    },

    async remove(path) {
      const real = noFollow(path);
      const info = await lstatOrUndefined(real);
      if (info === undefined) return false;
      if (info.isDirectory()) throw new HostFileKindError(path, "dir", "remove");
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

    async stat(path) {
      const info = await lstatOrUndefined(noFollow(path));
      if (info === undefined) return undefined;
      return { kind: kindOf(info), mode: info.mode & 0o7777, size: info.size } satisfies FileInfo;
    },

    async chmod(path, mode) {
      await chmod(follow(path), mode & 0o7777);
    },

    async symlink(target, path) {
      const segments = resolveSegments(base, path, false);
      const name = segments.at(-1);
      if (name === undefined) throw new HostPathError(path, "is the root directory");
      const real = joinUnderRoot(base, segments);
      const existing = await lstatOrUndefined(real);
      if (existing?.isDirectory()) throw new HostFileKindError(path, "dir", "replace with a symlink");
      await mkdirs(`/${segments.slice(0, -1).join("/")}`, DIR_MODE);
      const dirReal = joinUnderRoot(base, segments.slice(0, -1));
      const temp = `${dirReal}/.${name}.tmp-${randomBytes(6).toString("hex")}`;
      await symlink(target, temp);
      try {
        await rename(temp, real);
      } catch (err) {
        await unlink(temp).catch(() => undefined); // best effort; the original error matters
        throw err;
      }
    },
  };
  return fs;
}

function kindOf(info: Stats): FileInfo["kind"] {
  if (info.isFile()) return "file";
  if (info.isDirectory()) return "dir";
  if (info.isSymbolicLink()) return "symlink";
  return "other";
}
