import { writeSync } from "node:fs";
import { quoteName } from "../untrusted/index.ts";
import { fillTemp } from "./temp-file.ts";
import type { ChunkedData, FileData, FileStamp } from "./types.ts";

/** Whether `data` is pushed in by a producer (not bytes, text or a function giving the bytes). */
export const isChunked = (data: FileData): data is ChunkedData => typeof data === "object" && !(data instanceof Uint8Array);

/** Writes all of `chunk` at the descriptor's offset (write(2) may take less than asked). */
function writeAll(fd: number, chunk: Uint8Array): void {
  for (let done = 0; done < chunk.length; ) done += writeSync(fd, chunk, done, chunk.length - done);
}

/** A failure while the temp of `path` was written, naming `path` (a failed write(2) names no file) and keeping errno's code. */
export class ChunkedWriteError extends Error {
  override readonly name = "ChunkedWriteError";
  readonly code: string | undefined;
  constructor(
    readonly path: string,
    cause: unknown,
  ) {
    super(`cannot write ${quoteName(path)}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    const code = typeof cause === "object" && cause !== null && "code" in cause ? cause.code : undefined;
    this.code = typeof code === "string" ? code : undefined;
  }
}

/**
 * The temp of an atomic write of `path` filled from a producer (ChunkedData) instead of one buffer:
 * O_EXCL, the exact mode (fchmod is not filtered by the umask; 0600 until then), every chunk written
 * on this thread as the producer hands it over (write(2) into the page cache; the producer reuses
 * its buffer), fsynced unless told otherwise, closed. On any failure, the producer's included, the
 * temp is removed and the error names `path`. The caller renames the temp over the target.
 */
export async function writeTempChunked(path: string, temp: string, data: ChunkedData, mode: number, fsync: boolean): Promise<FileStamp> {
  try {
    return await fillTemp(temp, mode, fsync, (handle) => data.writeTo((chunk) => writeAll(handle.fd, chunk)));
  } catch (err) {
    throw new ChunkedWriteError(path, err);
  }
}
