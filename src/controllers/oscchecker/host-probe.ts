import { posix } from "node:path";
import type { HostFs } from "../../host/index.ts";
import { HostFileKindError } from "../../host/index.ts";

/**
 * Lexically cleaned absolute host path (Go's filepath.Clean). A relative path is taken from `/`,
 * the working directory systemd gives the agent.
 */
const cleanHostPath = (path: string): string => posix.resolve("/", path);

export const sha256Hex = (bytes: Uint8Array): string => new Bun.CryptoHasher("sha256").update(bytes).digest("hex");

export type ReadOutcome =
  | { readonly kind: "bytes"; readonly bytes: Uint8Array }
  | { readonly kind: "missing" }
  | { readonly kind: "error"; readonly err: unknown };

/** Reads a file and sorts the outcome; the checker reports every error kind instead of failing. */
export async function readOutcome(host: HostFs, path: string): Promise<ReadOutcome> {
  try {
    const bytes = await host.readFile(cleanHostPath(path));
    return bytes === undefined ? { kind: "missing" } : { kind: "bytes", bytes };
  } catch (err) {
    return { kind: "error", err };
  }
}

/**
 * Whether something exists at `path`, following a final symlink like os.Stat does: a dangling link
 * does not count. Any error counts as "does not exist" (upstream treats a failed Exists the same).
 */
export async function exists(host: HostFs, path: string): Promise<boolean> {
  const p = cleanHostPath(path);
  try {
    const info = await host.stat(p);
    if (info === undefined) return false;
    if (info.kind !== "symlink") return true;
    // HostFs.stat does not follow the last link; reading through it tells whether its target exists.
    return (await host.readFile(p)) !== undefined;
  } catch (err) {
    // A link to a directory: readFile refuses directories, which proves the target exists.
    return err instanceof HostFileKindError && err.kind === "dir";
  }
}
