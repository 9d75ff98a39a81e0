import type { Library } from "bun:ffi";

/**
 * libsystemd.so.0 through bun:ffi, opened only when a caller asks for it (so `--help`, `render` and
 * tests never map it). Bun has no unix datagram sockets, hence FFI for the native journal protocol.
 */

export interface LibSystemd {
  /**
   * sd_journal_sendv(3): one journal entry from `FIELD=value` strings. Returns 0 or a negative errno
   * (e.g. -ENOENT when /run/systemd/journal/socket does not exist).
   */
  journalSendv(fields: readonly string[]): number;
  close(): void;
}

/** Bytes per `struct iovec` on 64-bit Linux: void *iov_base; size_t iov_len. */
const IOVEC_SIZE = 16;

/** Opens libsystemd; undefined when the library (or bun:ffi) is not available on this host. */
export const loadLibSystemd = async (path = "libsystemd.so.0"): Promise<LibSystemd | undefined> => {
  const ffi = await import("bun:ffi");
  const symbols = {
    sd_journal_sendv: { args: [ffi.FFIType.ptr, ffi.FFIType.i32], returns: ffi.FFIType.i32 },
  } as const;
  let lib: Library<typeof symbols>;
  try {
    lib = ffi.dlopen(path, symbols);
  } catch (err) {
    // dlopen reports a missing library as a plain Error; there is nothing else it can mean here.
    if (err instanceof Error) return undefined;
    throw err;
  }
  const encoder = new TextEncoder();
  return {
    journalSendv(fields) {
      if (fields.length === 0) return 0;
      const parts = fields.map((f) => encoder.encode(f));
      const total = parts.reduce((n, p) => n + p.byteLength, 0);
      const data = new Uint8Array(Math.max(total, 1));
      const iov = new BigUint64Array((fields.length * IOVEC_SIZE) / 8);
      const base = ffi.ptr(data);
      let offset = 0;
      parts.forEach((p, i) => {
        data.set(p, offset);
        iov[i * 2] = BigInt(base + offset);
        iov[i * 2 + 1] = BigInt(p.byteLength);
        offset += p.byteLength;
      });
      // Both buffers stay referenced until the synchronous call returns.
      return lib.symbols.sd_journal_sendv(ffi.ptr(iov), fields.length);
    },
    close() {
      lib.close();
    },
  };
};
