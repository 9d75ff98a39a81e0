import { quoteName } from "../untrusted/index.ts";
import { RegistryError } from "./errors.ts";

/** "sha256:<hex>" of some bytes. */
export function sha256Digest(bytes: Uint8Array | string): string {
  return `sha256:${new Bun.CryptoHasher("sha256").update(bytes).digest("hex")}`;
}

/** Throws a DigestMismatchError unless `bytes` hash to `expected` (only sha256 is accepted). */
export function verifyDigest(bytes: Uint8Array, expected: string, what: string): void {
  if (!expected.startsWith("sha256:")) throw new RegistryError(`unsupported digest algorithm in ${quoteName(expected)}`);
  const actual = sha256Digest(bytes);
  if (actual !== expected) throw new DigestMismatchError(what, expected, actual);
}

export class DigestMismatchError extends RegistryError {
  override readonly name = "DigestMismatchError";
  constructor(
    readonly what: string,
    readonly expected: string,
    readonly actual: string,
  ) {
    super(`digest mismatch for ${what}: expected ${expected}, got ${actual}`);
  }
}
