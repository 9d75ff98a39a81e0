import { lstatSync, readlinkSync } from "node:fs";
import { HostPathError } from "./types.ts";

/** Linux gives up after 40 link hops (ELOOP); so do we. */
const MAX_LINK_HOPS = 40;

/** Splits an absolute host path into its segments; rejects relative paths, NUL bytes and "..". */
export function hostSegments(path: string): string[] {
  if (typeof path !== "string" || !path.startsWith("/")) throw new HostPathError(String(path), "not an absolute path");
  if (path.includes("\0")) throw new HostPathError(path, "contains a NUL byte");
  const segments = path.split("/").filter((s) => s !== "" && s !== ".");
  // ".." in a caller's path is refused outright: it only ever hides intent, and lexical clean-up
  // would give a different answer than the kernel once symlinks are involved.
  if (segments.includes("..")) throw new HostPathError(path, 'contains ".."');
  return segments;
}

/** The real path for a list of host segments under `root` ("/" root → plain host path). */
export function joinUnderRoot(root: string, segments: readonly string[]): string {
  const tail = segments.join("/");
  if (root === "/") return `/${tail}`;
  return tail === "" ? root : `${root}/${tail}`;
}

/**
 * Resolves symlinks along `path` inside `root`, the way `systemctl --root` and a chroot do:
 * absolute link targets are taken relative to the root; a relative target that climbs above the
 * root is an escape and throws. `followFinal` decides whether a link in the last position is
 * followed (reads, chmod) or kept (stat, remove, rename over it).
 * Returns the resolved host segments. Missing components end link resolution (nothing to follow).
 */
export function resolveSegments(root: string, path: string, followFinal: boolean): string[] {
  return walkSegments(root, path, followFinal).segments;
}

/**
 * resolveSegments, also telling whether every component it looked at (the last one too when followed) was an
 * existing directory after its links were followed: only such a resolution can be remembered (see host-fs.ts).
 */
export function walkSegments(root: string, path: string, followFinal: boolean): { readonly segments: string[]; readonly allDirs: boolean } {
  const pending = hostSegments(path);
  const resolved: string[] = [];
  let hops = 0;
  let missing = false;
  let allDirs = true;
  while (pending.length > 0) {
    const seg = pending.shift() as string;
    if (seg === "" || seg === ".") continue;
    if (seg === "..") {
      // Only link targets can bring ".." here.
      if (resolved.length === 0) throw new HostPathError(path, "a symlink points outside the root");
      resolved.pop();
      continue;
    }
    if (missing || (pending.length === 0 && !followFinal)) {
      allDirs = false; // missing, or the last component is not looked at
      resolved.push(seg);
      continue;
    }
    const candidate = joinUnderRoot(root, [...resolved, seg]);
    const info = lstatSync(candidate, { throwIfNoEntry: false });
    if (info === undefined) {
      missing = true;
      allDirs = false;
      resolved.push(seg);
      continue;
    }
    if (!info.isSymbolicLink()) {
      // Nothing below a non-directory can exist; the operation itself reports ENOTDIR.
      if (!info.isDirectory()) {
        missing = true;
        allDirs = false;
      }
      resolved.push(seg);
      continue;
    }
    if (++hops > MAX_LINK_HOPS) throw new HostPathError(path, "too many levels of symbolic links");
    const target = readlinkSync(candidate, "utf8");
    if (target.startsWith("/")) resolved.length = 0;
    pending.unshift(...target.split("/"));
  }
  return { segments: resolved, allDirs };
}
