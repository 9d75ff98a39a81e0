// dbus-next marshals every message through small put-streams, a parsed signature per value and a buffer
// per string: ~7 % of the agent's CPU samples over back-to-back 50-file applies, which send 12 calls
// before their last RestartUnit. The agent's calls have bodies of a few basic types; this writes their
// bytes directly, the same bytes dbus-next writes (marshal-call.test.ts compares them). Anything else is
// left to dbus-next, with its checks and errors.

/** What of a dbus-next Message the wire format needs (header fields by their names there). */
export interface OutgoingMessage {
  readonly type?: number;
  readonly flags?: number;
  readonly serial?: number | null;
  readonly path?: string;
  readonly interface?: string;
  readonly member?: string;
  readonly errorName?: string;
  readonly replySerial?: number | string;
  readonly destination?: string;
  readonly sender?: string;
  readonly signature?: string;
  readonly body?: readonly unknown[];
}

const METHOD_CALL = 1;
const PROTOCOL_VERSION = 1;
const LITTLE_ENDIAN = 0x6c; // "l"

/** Header fields in dbus-next's order, with their codes and value types. */
const headerFields = [
  ["path", 1, "o"],
  ["interface", 2, "s"],
  ["member", 3, "s"],
  ["errorName", 4, "s"],
  ["replySerial", 5, "u"],
  ["destination", 6, "s"],
  ["sender", 7, "s"],
  ["signature", 8, "g"],
] as const;

/** Body types written here: strings, object paths, booleans, uint32 and string arrays. */
const bodyTypes = new Set(["s", "o", "b", "u", "as"]);

const isWireString = (x: unknown): x is string => typeof x === "string" && !x.includes("\0");
const isUint32 = (x: unknown): x is number => typeof x === "number" && Number.isInteger(x) && x >= 0 && x <= 0xffffffff;

/** The complete types of `signature` when every one is in `bodyTypes`, else undefined. */
function splitSignature(signature: string): string[] | undefined {
  const types: string[] = [];
  for (let i = 0; i < signature.length; i++) {
    const type = signature[i] === "a" ? signature.slice(i, ++i + 1) : (signature[i] as string);
    if (!bodyTypes.has(type)) return undefined;
    types.push(type);
  }
  return types;
}

function fits(type: string, value: unknown): boolean {
  if (type === "s" || type === "o") return isWireString(value);
  if (type === "b") return typeof value === "boolean" || value === 0 || value === 1;
  if (type === "u") return isUint32(value);
  return Array.isArray(value) && value.every(isWireString);
}

class Writer {
  bytes = new Uint8Array(256);
  view = new DataView(this.bytes.buffer);
  at = 0;

  #room(n: number): void {
    if (this.at + n <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.at + n));
    grown.set(this.bytes);
    this.bytes = grown;
    this.view = new DataView(grown.buffer);
  }

  /** Zero padding up to a multiple of `n` (offsets count from the message start). */
  align(n: number): void {
    const pad = (n - (this.at % n)) % n;
    this.#room(pad);
    this.bytes.fill(0, this.at, this.at + pad);
    this.at += pad;
  }

  u8(x: number): void {
    this.#room(1);
    this.bytes[this.at++] = x;
  }

  u32(x: number): void {
    this.align(4);
    this.#room(4);
    this.view.setUint32(this.at, x, true);
    this.at += 4;
  }

  /** s and o: uint32 byte length, UTF-8 bytes, NUL. */
  string(s: string): void {
    const length = Buffer.byteLength(s, "utf8");
    this.u32(length);
    this.#room(length + 1);
    Buffer.from(this.bytes.buffer, this.bytes.byteOffset, this.bytes.length).write(s, this.at, length, "utf8");
    this.at += length;
    this.bytes[this.at++] = 0;
  }

  /** g: byte length, ASCII bytes, NUL. */
  signature(s: string): void {
    this.u8(s.length);
    this.#room(s.length + 1);
    for (let i = 0; i < s.length; i++) this.bytes[this.at++] = s.charCodeAt(i);
    this.bytes[this.at++] = 0;
  }

  /** A uint32 written earlier at `offset` (array lengths). */
  patch(offset: number, x: number): void {
    this.view.setUint32(offset, x, true);
  }
}

function writeValue(w: Writer, type: string, value: unknown): void {
  if (type === "s" || type === "o") w.string(value as string);
  else if (type === "b") w.u32(value ? 1 : 0);
  else if (type === "u") w.u32(value as number);
  else {
    // as: the length counts the elements' bytes, not the padding before the first.
    w.u32(0);
    const lengthAt = w.at - 4;
    const start = w.at;
    for (const s of value as string[]) w.string(s);
    w.patch(lengthAt, w.at - start);
  }
}

/**
 * The message's bytes as dbus-next's `marshallMessage` writes them (little endian, no file descriptors),
 * or undefined when its body has another type or a value dbus-next would check (it then marshals it).
 */
export function marshalMessage(msg: OutgoingMessage): Uint8Array | undefined {
  const signature = msg.signature ?? "";
  const body = msg.body ?? [];
  const types = splitSignature(signature);
  if (types === undefined || types.length !== body.length || !types.every((t, i) => fits(t, body[i]))) return undefined;
  if (typeof msg.serial !== "number" || msg.serial === 0 || !isUint32(msg.serial)) return undefined;

  const w = new Writer();
  w.u8(LITTLE_ENDIAN);
  w.u8(msg.type || METHOD_CALL);
  w.u8(msg.flags || 0);
  w.u8(PROTOCOL_VERSION);
  w.u32(0); // body length, patched below
  w.u32(msg.serial);
  // a(yv): every field a struct aligned to 8, its value a variant (signature, then the value).
  w.u32(0);
  w.align(8);
  const fieldsStart = w.at;
  for (const [name, code, type] of headerFields) {
    const value = msg[name];
    if (!value) continue; // dbus-next leaves out empty fields
    if (type === "u" ? !isUint32(value) : !isWireString(value)) return undefined;
    w.align(8);
    w.u8(code);
    w.signature(type);
    if (type === "g") w.signature(value as string);
    else if (type === "u") w.u32(value as number);
    else w.string(value as string);
  }
  w.patch(12, w.at - fieldsStart);
  w.align(8);
  const bodyStart = w.at;
  for (const [i, t] of types.entries()) writeValue(w, t, body[i]);
  w.patch(4, w.at - bodyStart);
  return w.bytes.subarray(0, w.at);
}
