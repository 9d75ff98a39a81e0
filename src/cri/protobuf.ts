/**
 * The few protobuf wire-format pieces the CRI calls need (proto3): varints, length-delimited fields
 * (strings, bytes, nested messages) and a reader that splits a message into its fields. Unknown
 * fields are skipped, as protobuf requires.
 */

export class ProtobufError extends Error {
  override readonly name = "ProtobufError";
}

const WIRE_VARINT = 0;
const WIRE_I64 = 1;
const WIRE_LEN = 2;
const WIRE_I32 = 5;

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder("utf-8", { fatal: true });

/** Builds one message; fields are appended in the order written. */
export class MessageWriter {
  readonly #parts: number[] = [];

  #varint(value: bigint | number): void {
    let v = BigInt.asUintN(64, BigInt(value));
    while (v >= 0x80n) {
      this.#parts.push(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    this.#parts.push(Number(v));
  }

  #tag(field: number, wire: number): void {
    this.#varint((field << 3) | wire);
  }

  /** int32/int64/uint32/uint64/enum/bool; proto3 omits zero values. */
  varint(field: number, value: bigint | number | boolean): this {
    const v = typeof value === "boolean" ? (value ? 1 : 0) : value;
    if (v === 0 || v === 0n) return this;
    this.#tag(field, WIRE_VARINT);
    this.#varint(v);
    return this;
  }

  bytes(field: number, value: Uint8Array): this {
    this.#tag(field, WIRE_LEN);
    this.#varint(value.length);
    for (const b of value) this.#parts.push(b);
    return this;
  }

  /** proto3 omits empty strings. */
  string(field: number, value: string): this {
    return value === "" ? this : this.bytes(field, utf8.encode(value));
  }

  message(field: number, value: MessageWriter): this {
    return this.bytes(field, value.finish());
  }

  /** A `map<string, string>` field: one entry message per pair (key = 1, value = 2). */
  map(field: number, entries: Readonly<Record<string, string>>): this {
    for (const [k, v] of Object.entries(entries)) this.message(field, new MessageWriter().string(1, k).string(2, v));
    return this;
  }

  finish(): Uint8Array {
    return Uint8Array.from(this.#parts);
  }
}

/** One decoded field: varints as bigint, length-delimited ones as bytes. */
export type Field = { readonly field: number; readonly value: bigint } | { readonly field: number; readonly bytes: Uint8Array };

/** Splits a message into its fields (fixed32/fixed64 fields are skipped: the CRI calls use none). */
export function readFields(buf: Uint8Array): Field[] {
  const out: Field[] = [];
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (pos >= buf.length) throw new ProtobufError("truncated varint");
      const b = buf[pos++] ?? 0;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
    }
    throw new ProtobufError("varint too long");
  };
  while (pos < buf.length) {
    const tag = Number(varint());
    const field = tag >>> 3;
    const wire = tag & 7;
    if (wire === WIRE_VARINT) out.push({ field, value: varint() });
    else if (wire === WIRE_LEN) {
      const len = Number(varint());
      if (pos + len > buf.length) throw new ProtobufError("truncated length-delimited field");
      out.push({ field, bytes: buf.subarray(pos, pos + len) });
      pos += len;
    } else if (wire === WIRE_I64) pos += 8;
    else if (wire === WIRE_I32) pos += 4;
    else throw new ProtobufError(`unsupported wire type ${wire} of field ${field}`);
  }
  if (pos > buf.length) throw new ProtobufError("truncated fixed-width field");
  return out;
}

/** The last value of a string field ("" when absent). */
export function stringField(fields: readonly Field[], field: number): string {
  let out = "";
  for (const f of fields) if (f.field === field && "bytes" in f) out = fromUtf8.decode(f.bytes);
  return out;
}

/** The last value of a varint field (0n when absent). */
export function varintField(fields: readonly Field[], field: number): bigint {
  let out = 0n;
  for (const f of fields) if (f.field === field && "value" in f) out = f.value;
  return out;
}

/** Every occurrence of a length-delimited field (repeated messages), in order. */
export function messageFields(fields: readonly Field[], field: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const f of fields) if (f.field === field && "bytes" in f) out.push(f.bytes);
  return out;
}
