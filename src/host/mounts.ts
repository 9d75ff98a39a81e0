import { readFile } from "node:fs/promises";

/** Mount points and unmounting — real paths on this machine, not resolved under a root. */
export interface Mounts {
  /** Every mount point listed in /proc/mounts, in its order (octal escapes such as `\040` decoded). */
  list(): Promise<string[]>;
  /** umount(2) without flags; resolves false when `path` is not a mount point (EINVAL). */
  unmount(path: string): Promise<boolean>;
}

export class UnmountError extends Error {
  override readonly name = "UnmountError";
  constructor(
    readonly path: string,
    readonly errno: number,
  ) {
    super(`failed unmounting ${path}: errno ${errno}`);
  }
}

const EINVAL = 22;

/** The second field of every /proc/mounts line, with the kernel's octal escapes decoded. */
export function parseProcMounts(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split("\n")) {
    const field = line.split(" ")[1];
    if (field === undefined || field === "") continue;
    out.push(field.replace(/\\([0-7]{3})/g, (_m, oct: string) => String.fromCharCode(parseInt(oct, 8))));
  }
  return out;
}

/**
 * /proc/mounts and libc's umount2 through bun:ffi (loaded on first unmount only, so commands that
 * never unmount never map libc).
 */
export function createMounts(procMounts = "/proc/mounts", libcPath = "libc.so.6"): Mounts {
  let umount: ((path: string) => number) | undefined;
  const load = async (): Promise<(path: string) => number> => {
    const ffi = await import("bun:ffi");
    const lib = ffi.dlopen(libcPath, {
      umount2: { args: [ffi.FFIType.cstring, ffi.FFIType.i32], returns: ffi.FFIType.i32 },
      __errno_location: { args: [], returns: ffi.FFIType.ptr },
    });
    return (path) => {
      const bytes = new TextEncoder().encode(`${path}\0`);
      if (lib.symbols.umount2(ffi.ptr(bytes), 0) === 0) return 0;
      const at = lib.symbols.__errno_location();
      return at === null ? -1 : ffi.read.i32(at, 0);
    };
  };
  return {
    list: async () => parseProcMounts(await readFile(procMounts, "utf8")),
    async unmount(path) {
      umount ??= await load();
      const errno = umount(path);
      if (errno === 0) return true;
      if (errno === EINVAL) return false;
      throw new UnmountError(path, errno);
    },
  };
}
