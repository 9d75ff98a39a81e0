import { constants, fstatSync } from "node:fs";
import { type FileHandle, open, unlink } from "node:fs/promises";
import { type FileStamp, stampOf } from "./types.ts";

/** A temp is always a new file of ours: never an existing one, never through a symlink. */
export const TEMP_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * Creates `temp` (O_EXCL, 0600 until its exact mode is set by fchmod, which the umask does not filter),
 * lets `fill` write it, fsyncs it unless told otherwise and closes it; on any failure the temp is removed
 * again and the error thrown. The caller renames it over the target (which keeps the stamp returned).
 */
export async function fillTemp(
  temp: string,
  mode: number,
  fsync: boolean,
  fill: (handle: FileHandle) => Promise<void> | void,
): Promise<FileStamp> {
  const handle = await open(temp, TEMP_FLAGS, 0o600);
  try {
    try {
      await handle.chmod(mode & 0o7777);
      await fill(handle);
      if (fsync) await handle.sync();
      // On this thread: one cheap call, no hop to the thread pool.
      return stampOf(fstatSync(handle.fd, { bigint: true }));
    } finally {
      await handle.close();
    }
  } catch (err) {
    await unlink(temp).catch(() => undefined); // best effort; the original error matters
    throw err;
  }
}
