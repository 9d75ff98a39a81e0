import { quoteName } from "../untrusted/index.ts";
import { RegistryError } from "./errors.ts";

/** Uncompressed tar bytes of a layer blob; gzip and zstd are recognised by their magic numbers. */
export function decompressLayer(blob: Uint8Array, mediaType: string): Uint8Array {
  if (!/tar(\+gzip|\+zstd|\.gzip)?$/.test(mediaType)) throw new RegistryError(`unsupported layer media type ${quoteName(mediaType)}`);
  // Blobs come from fetch/readFile, always backed by a plain ArrayBuffer.
  const bytes = blob as Uint8Array<ArrayBuffer>;
  try {
    if (bytes[0] === 0x1f && bytes[1] === 0x8b) return Bun.gunzipSync(bytes);
    if (bytes[0] === 0x28 && bytes[1] === 0xb5 && bytes[2] === 0x2f && bytes[3] === 0xfd) return Bun.zstdDecompressSync(bytes);
  } catch (err) {
    throw new RegistryError(`layer (${quoteName(mediaType)}) does not decompress`, { cause: err });
  }
  if (mediaType.endsWith("gzip") || mediaType.endsWith("zstd")) throw new RegistryError(`layer is not ${mediaType.slice(-4)} data`);
  return bytes;
}
