// A JSON text that arrives in byte chunks (one line of a watch stream, tens of megabytes for a Secret of a
// big OSC), parsed without ever holding the whole text: a string value that grows long while it contains
// nothing but base64 is decoded to its bytes as it streams in, so its characters are never kept (issue 27).
import { longValueChars } from "./big.ts";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const PAD = 0x3d;

/** The most decoded bytes one long value may reserve (address space only; pages count as they are written). */
const maxLongBytes = 1024 * 1024 * 1024;
/** A base64 character outside the standard alphabet (padding included: it is handled on its own). */
const notAlphabet = /[^A-Za-z0-9+/]/;
/** Stands in for a decoded value in the rest of the text, which is parsed as usual. */
const placeholderPrefix = "\\u0000gna-long-";
const placeholderValuePrefix = "\u0000gna-long-";

const latin1 = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
const utf8 = new TextDecoder();

/**
 * A long string value of a streamed JSON text that was standard padded base64 (what `Buffer.from(text,
 * "base64")` accepts after a strict check, like osc/content.ts's decodeBase64Strict): its bytes, and its text
 * again on demand.
 */
export class LongBase64 {
  readonly #fullBytes: number;
  readonly #tail: string;

  /** `bytes`: all decoded bytes; the first `fullBytes` come from the complete unpadded quanta, `tail` is the rest as text. */
  constructor(
    readonly bytes: Uint8Array,
    fullBytes: number,
    tail: string,
  ) {
    this.#fullBytes = fullBytes;
    this.#tail = tail;
  }

  /** The string value exactly as the JSON text held it (complete quanta encode back to the same characters). */
  text(): string {
    const { bytes } = this;
    return Buffer.from(bytes.buffer, bytes.byteOffset, this.#fullBytes).toString("base64") + this.#tail;
  }
}

type Mode = "out" | "string" | "base64";

/**
 * Assembles one JSON text from its byte chunks (`add`), then parses it (`end`): the same value JSON.parse
 * returns for the whole text, except that every string value of at least 1 MiB that is padded standard
 * base64 is a LongBase64 instead. Anything JSON.parse refuses is refused (a SyntaxError) the same way.
 */
export class JsonLineAssembler {
  /** The text so far, without the long values' characters (a placeholder each instead). */
  #text = new Uint8Array(64 * 1024);
  #length = 0;
  #mode: Mode = "out";
  /** In a string: where its characters start in #text; whether it may still be decoded as it streams. */
  #stringStart = 0;
  #plain = false;
  /** The previous chunk ended right after a backslash inside a string: the next byte is escaped. */
  #afterBackslash = false;
  // The long value being decoded: its bytes so far, up to three characters of an unfinished quantum, and
  // the padding characters seen (only closing quote may follow them).
  #out: ArrayBuffer | undefined;
  #outLength = 0;
  #carry = "";
  #pads = 0;
  readonly #longValues: LongBase64[] = [];
  /** Where each long value's placeholder is in #text (bytes), for rebuilding the whole text. */
  readonly #placeholders: Array<readonly [number, number]> = [];
  #nextBackslash: { readonly chunk: Uint8Array | undefined; readonly from: number; readonly at: number } = {
    chunk: undefined,
    from: 0,
    at: -1,
  };

  add(chunk: Uint8Array): void {
    let i = 0;
    while (i < chunk.length) {
      if (this.#mode === "out") i = this.#addOutside(chunk, i);
      else if (this.#mode === "string") i = this.#addString(chunk, i);
      else i = this.#addBase64(chunk, i);
    }
  }

  /** The parsed value; a SyntaxError when the text is not JSON. */
  end(): unknown {
    if (this.#mode === "base64") this.#restoreText();
    const bytes = this.#text.subarray(0, this.#length);
    const text = utf8.decode(bytes);
    const longValues = this.#longValues;
    if (longValues.length === 0) return JSON.parse(text);
    // Every `\u0000gna-long-` of the text must be one of ours, else the text's own could be taken for one.
    if (text.split(placeholderPrefix).length - 1 === longValues.length) {
      let used = 0;
      const value: unknown = JSON.parse(text, (_key, v: unknown) => {
        if (typeof v !== "string" || !v.startsWith(placeholderValuePrefix)) return v;
        const found = longValues[Number(v.slice(placeholderValuePrefix.length))];
        if (found === undefined) return v;
        used++;
        return found;
      });
      // A placeholder used as an object key is not revived: only then is the whole text rebuilt.
      if (used === longValues.length) return value;
    }
    return JSON.parse(this.#wholeText(bytes));
  }

  /** The text as it came: every placeholder replaced by its value's characters. */
  #wholeText(bytes: Uint8Array): string {
    const parts: string[] = [];
    let from = 0;
    this.#placeholders.forEach(([start, end], i) => {
      parts.push(utf8.decode(bytes.subarray(from, start)), (this.#longValues[i] as LongBase64).text());
      from = end;
    });
    parts.push(utf8.decode(bytes.subarray(from)));
    return parts.join("");
  }

  #append(bytes: Uint8Array): void {
    const needed = this.#length + bytes.length;
    if (needed > this.#text.length) {
      const grown = new Uint8Array(Math.max(needed, this.#text.length * 2));
      grown.set(this.#text.subarray(0, this.#length));
      this.#text = grown;
    }
    this.#text.set(bytes, this.#length);
    this.#length = needed;
  }

  /** The next backslash of `chunk` from `at` (-1: none), remembered: a chunk of many short strings is searched once. */
  #backslashFrom(chunk: Uint8Array, at: number): number {
    const known = this.#nextBackslash;
    if (known.chunk !== chunk || at < known.from || (known.at >= 0 && known.at < at)) {
      this.#nextBackslash = { chunk, from: at, at: chunk.indexOf(BACKSLASH, at) };
    }
    return this.#nextBackslash.at;
  }

  #appendAscii(text: string): void {
    this.#append(Buffer.from(text, "latin1"));
  }

  /** Outside strings JSON has no quote character: copied up to the next opening quote. */
  #addOutside(chunk: Uint8Array, from: number): number {
    const quote = chunk.indexOf(QUOTE, from);
    const end = quote < 0 ? chunk.length : quote + 1;
    this.#append(chunk.subarray(from, end));
    if (quote >= 0) {
      this.#mode = "string";
      this.#stringStart = this.#length;
      this.#plain = false;
      this.#afterBackslash = false;
    }
    return end;
  }

  /** A string's characters, up to its closing quote; a long one without escapes turns to decoding. */
  #addString(chunk: Uint8Array, from: number): number {
    let at = from;
    if (this.#afterBackslash) {
      at++;
      this.#afterBackslash = false;
    }
    let quote = chunk.indexOf(QUOTE, at);
    let backslash = this.#backslashFrom(chunk, at);
    while (backslash >= 0 && (quote < 0 || backslash < quote)) {
      // An escape: the string stays text; the escaped character is skipped (it may be in the next chunk).
      this.#plain = true;
      at = backslash + 2;
      if (at > chunk.length) {
        this.#afterBackslash = true;
        break;
      }
      if (quote >= 0 && quote < at) quote = chunk.indexOf(QUOTE, at);
      backslash = this.#backslashFrom(chunk, at);
    }
    const end = quote < 0 ? chunk.length : quote + 1;
    this.#append(chunk.subarray(from, end));
    if (quote >= 0) this.#mode = "out";
    else if (!this.#plain && this.#length - this.#stringStart >= longValueChars) this.#startBase64();
    return end;
  }

  /** The long string's characters so far are decoded; from here on they are not kept as text. */
  #startBase64(): void {
    const characters = this.#text.slice(this.#stringStart, this.#length);
    this.#length = this.#stringStart;
    this.#mode = "base64";
    this.#out = new ArrayBuffer(0, { maxByteLength: maxLongBytes });
    this.#outLength = 0;
    this.#carry = "";
    this.#pads = 0;
    const taken = this.#takeBase64(characters);
    if (taken < characters.length) {
      this.#restoreText();
      this.#append(characters.subarray(taken));
    }
  }

  #addBase64(chunk: Uint8Array, from: number): number {
    const quote = chunk.indexOf(QUOTE, from);
    const end = quote < 0 ? chunk.length : quote;
    const taken = this.#takeBase64(chunk.subarray(from, end));
    if (from + taken < end) {
      // Not base64 after all: text again, from the first character that is not.
      this.#restoreText();
      return from + taken;
    }
    if (quote >= 0) {
      if (this.#finishBase64()) {
        this.#mode = "string"; // the closing quote is copied as any string's
        this.#plain = true;
      } else this.#restoreText();
    }
    return end;
  }

  /** Decodes what it can of `characters`; returns how many were base64 (all of them, unless one is not). */
  #takeBase64(characters: Uint8Array): number {
    let i = 0;
    if (this.#pads === 0) {
      const text = latin1(characters);
      const bad = notAlphabet.exec(text)?.index ?? text.length;
      if (this.#outLength + Math.ceil((this.#carry.length + bad) / 4) * 3 > maxLongBytes) return 0;
      // The quantum the last chunk left open is completed on its own; the rest is decoded from slices of
      // the chunk's text (they share its characters): a chunk leaves one text of garbage, not three.
      let at = 0;
      if (this.#carry !== "") {
        at = Math.min(bad, 4 - this.#carry.length);
        this.#carry += text.slice(0, at);
        if (this.#carry.length === 4) {
          this.#decode(this.#carry);
          this.#carry = "";
        }
      }
      if (this.#carry === "") {
        const whole = bad - ((bad - at) % 4);
        this.#decode(text.slice(at, whole));
        this.#carry = text.slice(whole, bad);
      }
      i = bad;
    }
    // Padding: at most two, closing the last quantum (only the closing quote may follow).
    for (; i < characters.length && characters[i] === PAD && this.#pads < 2; i++) this.#pads++;
    return i;
  }

  /** Appends the bytes of whole quanta (takeBase64 checked they fit the reservation). */
  #decode(quanta: string): void {
    if (quanta.length === 0) return;
    const out = this.#out as ArrayBuffer;
    const n = (quanta.length / 4) * 3;
    if (this.#outLength + n > out.byteLength) out.resize(Math.min(out.maxByteLength, Math.max(this.#outLength + n, out.byteLength * 1.25)));
    Buffer.from(out, 0, out.byteLength).write(quanta, this.#outLength, n, "base64");
    this.#outLength += n;
  }

  /** The closing quote of a long value: its last quantum checked and decoded, a placeholder left in the text. */
  #finishBase64(): boolean {
    const carry = this.#carry;
    const pads = this.#pads;
    if (carry.length + pads !== 0 && (pads === 0 || carry.length + pads !== 4)) return false;
    const out = this.#out as ArrayBuffer;
    const fullBytes = this.#outLength;
    const tail = carry + "=".repeat(pads);
    if (tail !== "") {
      const last = Buffer.from(tail, "base64");
      if (fullBytes + last.length > out.byteLength) out.resize(fullBytes + last.length);
      new Uint8Array(out).set(last, fullBytes);
      this.#outLength += last.length;
    }
    out.resize(this.#outLength);
    this.#out = undefined;
    const start = this.#length;
    this.#appendAscii(`${placeholderPrefix}${this.#longValues.length}`);
    this.#placeholders.push([start, this.#length]);
    this.#longValues.push(new LongBase64(new Uint8Array(out, 0, this.#outLength), fullBytes, tail));
    return true;
  }

  /** Gives up decoding the current string: its characters so far back into the text, exactly as they came. */
  #restoreText(): void {
    const out = this.#out;
    const decoded = out === undefined ? "" : Buffer.from(out, 0, this.#outLength).toString("base64");
    this.#out = undefined;
    this.#appendAscii(decoded + this.#carry + "=".repeat(this.#pads));
    this.#carry = "";
    this.#pads = 0;
    this.#mode = "string";
    this.#plain = true;
  }
}
