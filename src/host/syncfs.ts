import type { Library } from "bun:ffi";

/**
 * syncfs(2) on the filesystem holding the open file descriptor `fd`: every dirty page and inode of
 * that filesystem reaches the disk. Returns false when the call failed (the caller then falls back
 * to fsync per file, which reports the real error if there is one).
 */
export type Syncfs = (fd: number) => boolean;

/**
 * libc's syncfs through bun:ffi, or undefined when bun:ffi or the symbol is unavailable (another libc,
 * a sandbox without dlopen). Loaded on first use only, so commands that write no file groups never map libc.
 * The call blocks the JS thread until the filesystem is flushed; one call replaces hundreds of fsyncs.
 */
export async function loadSyncfs(libcPath = "libc.so.6"): Promise<Syncfs | undefined> {
  try {
    const ffi = await import("bun:ffi");
    const symbols = { syncfs: { args: [ffi.FFIType.i32], returns: ffi.FFIType.i32 } } as const;
    const libc: Library<typeof symbols> = ffi.dlopen(libcPath, symbols);
    return (fd) => libc.symbols.syncfs(fd) === 0;
  } catch {
    // Expected on hosts without a glibc at that name: batch writes fsync each file instead.
    return undefined;
  }
}
