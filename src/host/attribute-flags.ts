import type { Library } from "bun:ffi";

/** Inode flags as `lsattr` shows them (linux/fs.h). */
export const FS_IMMUTABLE_FL = 0x10;
export const FS_APPEND_FL = 0x20;

/** _IOR('f', 1, long): the same number on x86_64 and arm64. */
const FS_IOC_GETFLAGS = 0x80086601;
// O_NOFOLLOW differs between the two architectures; O_NONBLOCK and O_CLOEXEC do not.
const O_NONBLOCK = 0o4000;
const O_CLOEXEC = 0o2000000;
const O_NOFOLLOW = process.arch === "arm64" ? 0o100000 : 0o400000;
/** Not a flags question: missing, a symlink (O_NOFOLLOW), or no FS_IOC_GETFLAGS on that file system. */
const ENOENT = 2;
const ENOTDIR = 20;
const EINVAL = 22;
const ENOTTY = 25;
const ELOOP = 40;
const EOPNOTSUPP = 95;
const unanswered = new Set([ENOENT, ENOTDIR, EINVAL, ENOTTY, ELOOP, EOPNOTSUPP]);

/** Flags of the file at real path `real` (never followed), or undefined when there are none to read. */
export type ReadAttributeFlags = (real: string) => number | undefined;

/**
 * libc's open + ioctl(FS_IOC_GETFLAGS) + close through bun:ffi, or a reader that always answers
 * undefined where bun:ffi or libc is unavailable. Loaded on first use, so start-up maps nothing.
 */
export async function loadAttributeFlags(libcPath = "libc.so.6"): Promise<ReadAttributeFlags> {
  let ffi: typeof import("bun:ffi");
  let libc: Library<ReturnType<typeof symbolsOf>>;
  try {
    ffi = await import("bun:ffi");
    libc = ffi.dlopen(libcPath, symbolsOf(ffi.FFIType));
  } catch {
    return () => undefined;
  }
  const { open, ioctl, close, __errno_location } = libc.symbols;
  const encoder = new TextEncoder();
  const flags = new BigInt64Array(1); // the kernel writes an int; a long's room costs nothing
  const errno = (): number => ffi.read.i32(__errno_location() as NonNullable<ReturnType<typeof __errno_location>>, 0);
  return (real) => {
    const path = encoder.encode(`${real}\0`);
    const fd = open(ffi.ptr(path), O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC, 0);
    if (fd < 0) {
      const code = errno();
      if (unanswered.has(code)) return undefined;
      throw new Error(`open for FS_IOC_GETFLAGS failed: errno ${code}`);
    }
    try {
      flags[0] = 0n;
      if (ioctl(fd, FS_IOC_GETFLAGS, ffi.ptr(flags)) < 0) {
        const code = errno();
        if (unanswered.has(code)) return undefined;
        throw new Error(`ioctl FS_IOC_GETFLAGS failed: errno ${code}`);
      }
      return Number(flags[0] & 0xffffffffn);
    } finally {
      close(fd);
    }
  };
}

function symbolsOf(t: typeof import("bun:ffi").FFIType) {
  return {
    open: { args: [t.ptr, t.i32, t.u32], returns: t.i32 },
    ioctl: { args: [t.i32, t.u64, t.ptr], returns: t.i32 },
    close: { args: [t.i32], returns: t.i32 },
    __errno_location: { args: [], returns: t.ptr },
  } as const;
}
