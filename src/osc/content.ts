import { keepOutOfTopTier } from "../jit/index.ts";
import { Base64Error, InvalidCodecError } from "./errors.ts";

/** 1 for the 64 characters of the standard alphabet. */
const alphabet = new Uint8Array(128);
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") alphabet[c.charCodeAt(0)] = 1;
const PAD = 0x3d;

/**
 * Offset (in `s`, CR/LF removed) of the first character that makes `s` invalid standard padded base64,
 * or -1. One linear pass: a regular expression over millions of characters exhausts the engine.
 */
function firstInvalid(s: string): number {
  const n = s.length;
  let pad = 0;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c === PAD) {
      // At most two, only in the last quantum, and nothing but padding after them.
      if (i < n - 2 || n % 4 !== 0 || i % 4 < 2) return i;
      pad++;
    } else if (pad > 0 || c >= 128 || alphabet[c] !== 1) return i;
  }
  return n % 4 === 0 ? -1 : n;
}

/**
 * Standard base64 with padding; CR/LF are ignored (as Go's decoder does), anything else invalid is an
 * error naming the offset (never the data). Any length the API server can deliver.
 */
export function decodeBase64Strict(data: string): Uint8Array {
  const s = withoutLineBreaks(data);
  checkBase64(s);
  const b = Buffer.from(s, "base64");
  // A view, not a copy (a big OSC's osc.yaml is tens of megabytes); a plain Uint8Array for callers.
  return new Uint8Array(b.buffer, b.byteOffset, b.length);
}

/**
 * The bytes of base64 text already checked (checkInline), written into `into` when it has room (a buffer
 * the caller reuses, issue 27), else into a new buffer; returns that buffer and the bytes (a view of it).
 */
export function decodeCheckedBase64Into(data: string, into: Buffer | undefined): { readonly buffer: Buffer; readonly bytes: Uint8Array } {
  const s = withoutLineBreaks(data);
  const n = Buffer.byteLength(s, "base64");
  const buffer = into !== undefined && into.length >= n ? into : Buffer.allocUnsafeSlow(Math.max(n, 4096));
  const written = buffer.write(s, 0, n, "base64");
  return { buffer, bytes: new Uint8Array(buffer.buffer, buffer.byteOffset, written) };
}

const withoutLineBreaks = (data: string): string => (data.includes("\r") || data.includes("\n") ? data.replace(/[\r\n]/g, "") : data);

function checkBase64(s: string): void {
  const bad = firstInvalid(s);
  if (bad >= 0) throw new Base64Error(`illegal base64 data at input byte ${bad}`);
}

/** Throws what `decodeInline` would throw, without producing the bytes. */
export function checkInline(encoding: string, data: string): void {
  switch (encoding) {
    case "":
      return;
    case "b64":
      return checkBase64(withoutLineBreaks(data));
    default:
      throw new InvalidCodecError();
  }
}

/** Bytes of an inline file content: encoding "" = verbatim UTF-8, "b64" = strict base64. */
export function decodeInline(encoding: string, data: string): Uint8Array {
  switch (encoding) {
    case "":
      return new TextEncoder().encode(data);
    case "b64":
      return decodeBase64Strict(data);
    default:
      throw new InvalidCodecError();
  }
}
// Issue 25: per file or line of a 1000-file apply (jit/top-tier.ts).
keepOutOfTopTier(firstInvalid);
