import type { Library } from "bun:ffi";

/** Inode flags as `lsattr` shows them (linux/fs.h); statx(2) reports these two under the same bits. */
export const FS_IMMUTABLE_FL = 0x10;
export const FS_APPEND_FL = 0x20;

/** _IOR('f', 1, long): the same number on x86_64 and arm64. */
const FS_IOC_GETFLAGS = 0x80086601;
// O_NOFOLLOW differs between the two architectures; O_NONBLOCK and O_CLOEXEC do not.
const O_NONBLOCK = 0o4000;
const O_CLOEXEC = 0o2000000;
const O_NOFOLLOW = process.arch === "arm64" ? 0o100000 : 0o400000;
const AT_FDCWD = -100;
const AT_SYMLINK_NOFOLLOW = 0x100;
/** STATX_TYPE | STATX_MODE: the attributes come with any request. */
const STATX_TYPE_MODE = 0x3;
/** struct statx (the same layout on every architecture): offsets of the fields read here. */
const STATX_SIZE = 256;
const STX_ATTRIBUTES = 8;
const STX_MODE = 28;
const STX_ATTRIBUTES_MASK = 56;
const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
const asked = FS_IMMUTABLE_FL | FS_APPEND_FL;
/** Not a flags question: missing, a symlink (O_NOFOLLOW), or no FS_IOC_GETFLAGS on that file system. */
const ENOENT = 2;
const ENOTDIR = 20;
const EINVAL = 22;
const ENOTTY = 25;
const ELOOP = 40;
const EOPNOTSUPP = 95;
const ENOSYS = 38;
const unanswered = new Set([ENOENT, ENOTDIR, EINVAL, ENOTTY, ELOOP, EOPNOTSUPP]);

/**
 * The immutable and append-only flags (FS_IMMUTABLE_FL, FS_APPEND_FL; other bits may be set too) of the
 * file at real path `real` (never followed), or undefined when there are none to read.
 */
export type ReadAttributeFlags = (real: string) => number | undefined;

/**
 * One statx(2) per path where the file system reports these attributes (ext4, xfs, btrfs, tmpfs…):
 * the same answer as open + ioctl(FS_IOC_GETFLAGS) + close, in one call instead of three (a 1000-file
 * apply asks for every file it replaces). Where statx does not report them (procfs, older kernels,
 * a libc without statx), libc's open + ioctl + close as `lsattr` does. Through bun:ffi, loaded on first
 * use so that start-up maps nothing; a reader that always answers undefined where bun:ffi or libc is
 * unavailable. `useStatx` false: the ioctl for every path (tests compare the two).
 */
export async function loadAttributeFlags(libcPath = "libc.so.6", useStatx = true): Promise<ReadAttributeFlags> {
  let ffi: typeof import("bun:ffi");
  let libc: Library<ReturnType<typeof ioctlSymbols>>;
  try {
    ffi = await import("bun:ffi");
    libc = ffi.dlopen(libcPath, ioctlSymbols(ffi.FFIType));
  } catch {
    return () => undefined;
  }
  let statx: ((dirfd: number, path: NodeJS.TypedArray, flags: number, mask: number, buf: NodeJS.TypedArray) => number) | undefined;
  try {
    if (!useStatx) throw new Error("not asked");
    const { symbols } = ffi.dlopen(libcPath, {
      statx: { args: [ffi.FFIType.i32, ffi.FFIType.ptr, ffi.FFIType.i32, ffi.FFIType.u32, ffi.FFIType.ptr], returns: ffi.FFIType.i32 },
    });
    statx = (dirfd, path, flags, mask, buf) => symbols.statx(dirfd, ffi.ptr(path), flags, mask, ffi.ptr(buf));
  } catch {
    statx = undefined; // glibc before 2.28: the ioctl for every path
  }
  const { open, ioctl, close, __errno_location } = libc.symbols;
  const flags = new BigInt64Array(1); // the kernel writes an int; a long's room costs nothing
  const stx = new DataView(new ArrayBuffer(STATX_SIZE));
  const stxBytes = new Uint8Array(stx.buffer);
  let path = new Uint8Array(4096);
  const encoder = new TextEncoder();
  const errno = (): number => ffi.read.i32(__errno_location() as NonNullable<ReturnType<typeof __errno_location>>, 0);
  /** `real` NUL-terminated in a buffer kept between calls. */
  const cPath = (real: string): Uint8Array => {
    if (real.length * 3 + 1 > path.length) path = new Uint8Array(real.length * 3 + 1);
    const { written } = encoder.encodeInto(real, path);
    path[written] = 0;
    return path;
  };
  /** The statx answer; "ask" when this file system does not report the two attributes. */
  const viaStatx = (p: Uint8Array): number | undefined | "ask" => {
    if (statx === undefined) return "ask";
    if (statx(AT_FDCWD, p, AT_SYMLINK_NOFOLLOW, STATX_TYPE_MODE, stxBytes) < 0) {
      const code = errno();
      if (code === ENOSYS) {
        statx = undefined; // a kernel without statx (before 4.11)
        return "ask";
      }
      if (unanswered.has(code)) return undefined;
      throw new Error(`statx failed: errno ${code}`);
    }
    if ((stx.getUint16(STX_MODE, true) & S_IFMT) === S_IFLNK) return undefined; // as O_NOFOLLOW's ELOOP
    const mask = Number(stx.getBigUint64(STX_ATTRIBUTES_MASK, true) & 0xffffffffn);
    if ((mask & asked) !== asked) return "ask";
    return Number(stx.getBigUint64(STX_ATTRIBUTES, true) & 0xffffffffn) & mask;
  };
  const viaIoctl = (p: Uint8Array): number | undefined => {
    const fd = open(ffi.ptr(p), O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC, 0);
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
  return (real) => {
    const p = cPath(real);
    const answer = viaStatx(p);
    return answer === "ask" ? viaIoctl(p) : answer;
  };
}

function ioctlSymbols(t: typeof import("bun:ffi").FFIType) {
  return {
    open: { args: [t.ptr, t.i32, t.u32], returns: t.i32 },
    ioctl: { args: [t.i32, t.u64, t.ptr], returns: t.i32 },
    close: { args: [t.i32], returns: t.i32 },
    __errno_location: { args: [], returns: t.ptr },
  } as const;
}
