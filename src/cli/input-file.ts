import { readFile, stat } from "node:fs/promises";
import { UsageError } from "./errors.ts";

/**
 * Reads a file named on the command line (not `-`), saying what is wrong with the path when it cannot:
 * missing, a directory, a symlink loop, not readable. A FIFO or device (`<(…)`, /dev/stdin) is read to its end.
 */
const errno = (err: unknown): unknown => (typeof err === "object" && err !== null ? (err as { code?: unknown }).code : undefined);

export async function readInputFile(path: string, what: string): Promise<Uint8Array> {
  try {
    if ((await stat(path)).isDirectory()) throw new UsageError(`${what} ${path} is a directory`);
    return new Uint8Array(await readFile(path));
  } catch (err) {
    const code = errno(err);
    if (code === "ENOENT" || code === "ENOTDIR") throw new UsageError(`${what} ${path} does not exist`);
    if (code === "ELOOP") throw new UsageError(`${what} ${path} is a symlink loop (too many levels of symbolic links)`);
    if (code === "EACCES" || code === "EPERM") throw new UsageError(`${what} ${path} cannot be read: permission denied`);
    throw err;
  }
}
