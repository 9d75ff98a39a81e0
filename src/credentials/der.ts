/**
 * The few DER (X.690) shapes a PKCS#10 request and a SEC1 key need, hand-written so no ASN.1
 * dependency is pulled into the binary. Encoders return bytes; `readTlv` walks encoded data.
 */

const concat = (parts: readonly Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
};

function lengthBytes(n: number): Uint8Array {
  if (n < 0x80) return Uint8Array.of(n);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Uint8Array.of(0x80 | bytes.length, ...bytes);
}

/** One TLV with an explicit tag byte. */
const tlv = (tag: number, ...content: Uint8Array[]): Uint8Array => {
  const body = concat(content);
  return concat([Uint8Array.of(tag), lengthBytes(body.length), body]);
};

export const sequence = (...items: Uint8Array[]): Uint8Array => tlv(0x30, ...items);
export const set = (...items: Uint8Array[]): Uint8Array => tlv(0x31, ...items);
export const octetString = (b: Uint8Array): Uint8Array => tlv(0x04, b);
/** BIT STRING without unused bits. */
export const bitString = (b: Uint8Array): Uint8Array => tlv(0x03, Uint8Array.of(0), b);
/** Constructed context-specific tag [n]. */
export const contextTag = (n: number, ...content: Uint8Array[]): Uint8Array => tlv(0xa0 | n, ...content);

/** INTEGER from unsigned big-endian magnitude bytes (leading zeros stripped, sign byte added). */
export function unsignedInteger(magnitude: Uint8Array): Uint8Array {
  let i = 0;
  while (i < magnitude.length - 1 && magnitude[i] === 0) i++;
  const m = magnitude.subarray(i);
  return (m[0] ?? 0) & 0x80 ? tlv(0x02, Uint8Array.of(0), m) : tlv(0x02, m.length === 0 ? Uint8Array.of(0) : m);
}

export const smallInteger = (n: number): Uint8Array => unsignedInteger(Uint8Array.of(n));

export function objectIdentifier(dotted: string): Uint8Array {
  const arcs = dotted.split(".").map(Number);
  const [a = 0, b = 0, ...rest] = arcs;
  const out: number[] = [a * 40 + b];
  for (const arc of rest) {
    const chunk: number[] = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift(0x80 | (v & 0x7f));
    out.push(...chunk);
  }
  return tlv(0x06, Uint8Array.from(out));
}

const printable = /^[A-Za-z0-9 '()+,\-./:=?]*$/;

/** PrintableString when the text fits its alphabet (like Go's crypto/x509), else UTF8String. */
export const directoryString = (s: string): Uint8Array => tlv(printable.test(s) ? 0x13 : 0x0c, new TextEncoder().encode(s));

/** A decoded TLV: tag byte, content bytes, and the whole encoding. */
export interface Tlv {
  readonly tag: number;
  readonly content: Uint8Array;
  readonly raw: Uint8Array;
}

export class DerError extends Error {
  override readonly name = "DerError";
}

/** Reads the TLV starting at `offset`; throws DerError on truncated or non-minimal input. */
export function readTlv(data: Uint8Array, offset = 0): Tlv {
  const tag = data[offset];
  let len = data[offset + 1];
  if (tag === undefined || len === undefined) throw new DerError("truncated DER element");
  let pos = offset + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4) throw new DerError("unsupported DER length");
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + (data[pos + i] ?? 0);
    pos += n;
  }
  if (pos + len > data.length) throw new DerError("truncated DER element");
  return { tag, content: data.subarray(pos, pos + len), raw: data.subarray(offset, pos + len) };
}

/** The elements inside a constructed TLV's content. */
export function children(content: Uint8Array): Tlv[] {
  const out: Tlv[] = [];
  for (let off = 0; off < content.length; ) {
    const t = readTlv(content, off);
    out.push(t);
    off += t.raw.length;
  }
  return out;
}
