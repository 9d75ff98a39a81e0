import { keepOutOfTopTier } from "../jit/index.ts";
/**
 * A fast path for reading OSC YAML: Bun's native parser (`Bun.YAML.parse`, ~30× faster than the `yaml`
 * package and without its document tree) for texts that stay inside a conservative subset on which it
 * yields exactly what `readYaml`'s slow path yields (YAML 1.2 core, typed fields per YAML 1.1).
 *
 * `fastYamlEligible` scans the text once and says no whenever it meets anything outside the subset:
 * - anchors, aliases, tags, merge keys, explicit keys, directives, document markers (`&`, `*`, `!`,
 *   `<<`, `?`, `%`, `---`, `...`): Bun merges `<<` and ignores `!!binary`, and `yaml` limits aliases;
 * - a plain scalar that is not a decimal integer without leading zero, `true`/`false`/`null`/`~`, a
 *   string starting with a letter, `/`, `_`, `$` or `(` that is not one of the YAML 1.1 boolean/null
 *   words (any case), or a digit-led word of letters and digits that no version reads as a number
 *   (`digitWord` below). On such scalars YAML 1.1 and 1.2 agree, so the 1.1 handling of `permissions`,
 *   `enable`, … changes nothing (`0644`, `yes`, `0o644`, `1_000` all take the slow path);
 * - quoted scalars or flow collections spanning lines, block scalars with an indentation indicator,
 *   tabs or control characters outside block scalars and quotes, `\r`, BOMs, `__proto__`.
 * Bun parse errors also fall back, so error messages stay the slow path's.
 *
 * The scan reads UTF-8 bytes in place (a text is encoded first): it makes no string per line or window,
 * so a big OSC's scan leaves no garbage (issue 27). The whole-text checks are native searches; only the
 * structure is walked byte by byte, and a plain scalar's end is found by native searches too.
 */
import { isUtf8 } from "node:buffer";
import { bigTextChars } from "../text/index.ts";

const TAB = 0x09;
const NEWLINE = 0x0a;
const SPACE = 0x20;
const QUOTE = 0x22;
const HASH = 0x23;
const APOSTROPHE = 0x27;
const COMMA = 0x2c;
const DASH = 0x2d;
const COLON = 0x3a;
const BACKSLASH = 0x5c;
/** What `at` gives past a line's end (charCodeAt's NaN in a string scan). */
const EOL = -1;

const isLetter = (c: number): boolean => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
/**
 * A value that starts with a digit yet is a string for YAML 1.1, YAML 1.2 core and Bun alike: letters and
 * digits only, with a letter that cannot be an exponent, and no 0x/0o/0b prefix (e.g. a checksum such as
 * `865ccc6f…`, which the changes file holds; `1e5`, `0x1f`, `0b11`, `1_000` still take the slow path).
 */
const digitWord = /^[0-9][0-9A-Za-z]*$/;
const nonExponentLetter = /[A-DF-Za-df-z]/;
const radixPrefix = /^0[xXoObB]/;
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;

/** `digitWord` above: a digit-led plain scalar that every reader (and the `yaml` writer) takes as a string. */
export const digitLedString = (token: string): boolean =>
  isDigit(token.charCodeAt(0)) && digitWord.test(token) && nonExponentLetter.test(token) && !radixPrefix.test(token);

/** YAML 1.1 / 1.2 boolean and null words in any letter case (plain scalars only), by length. */
const specialWords: readonly (readonly string[])[] = [
  [],
  ["y", "n"],
  ["no", "on"],
  ["yes", "off", "nan", "inf"],
  ["true", "null"],
  ["false"],
];
const specialWordsPattern = /^(?:y|n|yes|no|on|off|true|false|null|nan|inf)$/i;
const safeIntPattern = /^(?:0|-?[1-9][0-9]{0,14})$/;

/** Whether bytes [from, to) are `word` (lower case ASCII), in any letter case when `anyCase`. */
function bytesAre(b: Uint8Array, from: number, to: number, word: string, anyCase: boolean): boolean {
  if (to - from !== word.length) return false;
  // b | 0x20 is the lower case letter for exactly that letter's two cases.
  for (let k = 0; k < word.length; k++) if ((anyCase ? (b[from + k] as number) | 0x20 : b[from + k]) !== word.charCodeAt(k)) return false;
  return true;
}

/** `specialWordsPattern` over bytes. */
function isSpecialWord(b: Uint8Array, from: number, to: number): boolean {
  for (const word of specialWords[to - from] ?? []) if (bytesAre(b, from, to, word, true)) return true;
  return false;
}

/** `digitLedString` over bytes. */
function digitLedBytes(b: Uint8Array, from: number, to: number): boolean {
  if (!isDigit(b[from] as number)) return false;
  const radix = (b[from + 1] as number) | 0x20; // x, o or b in either case after a leading 0
  if (to - from > 1 && b[from] === 0x30 && (radix === 0x78 || radix === 0x6f || radix === 0x62)) return false;
  let nonExponent = false;
  for (let k = from; k < to; k++) {
    const c = b[k] as number;
    if (isLetter(c)) nonExponent ||= (c | 0x20) !== 0x65;
    else if (!isDigit(c)) return false;
  }
  return nonExponent;
}

/** `safeIntPattern` over bytes: 0, or up to 15 digits without a leading zero, maybe negative. */
function safeIntBytes(b: Uint8Array, from: number, to: number): boolean {
  if (to - from === 1 && b[from] === 0x30) return true;
  const digits = b[from] === DASH ? from + 1 : from;
  if (digits >= to || to - digits > 15 || b[digits] === 0x30) return false;
  for (let k = digits; k < to; k++) if (!isDigit(b[k] as number)) return false;
  return true;
}

/** A plain scalar whose resolution is the same in YAML 1.1, YAML 1.2 core and Bun (a string scan's token). */
function safePlain(token: string, isKey: boolean): boolean {
  const c = token.charCodeAt(0);
  if (isLetter(c) || c === 0x2f || c === 0x5f || c === 0x24 || c === 0x28) {
    if (!specialWordsPattern.test(token)) return true;
    return !isKey && (token === "true" || token === "false" || token === "null");
  }
  if (isKey) return false;
  if (digitLedString(token)) return true;
  return token === "~" || safeIntPattern.test(token);
}

/** `safePlain` for the ASCII-ended token at bytes [from, to), without making it a string. */
function safePlainBytes(b: Uint8Array, from: number, to: number, isKey: boolean): boolean {
  const c = b[from] as number;
  if (isLetter(c) || c === 0x2f || c === 0x5f || c === 0x24 || c === 0x28) {
    if (!isSpecialWord(b, from, to)) return true;
    return (
      !isKey && (bytesAre(b, from, to, "true", false) || bytesAre(b, from, to, "false", false) || bytesAre(b, from, to, "null", false))
    );
  }
  if (isKey) return false;
  if (digitLedBytes(b, from, to)) return true;
  return (to - from === 1 && c === 0x7e) || safeIntBytes(b, from, to);
}

const tokenDecoder = new TextDecoder();

/** Whether a character may follow a complete scalar or collection on a line. */
const separatorAfter = (c: number, flow: boolean): boolean =>
  c === EOL || c === SPACE || c === COLON || (flow && (c === COMMA || c === 0x5d || c === 0x7d));

/** A block scalar header's rest after `|` or `>`: `[-+]?` then spaces, or at least one space and a comment. */
function blockHeaderRest(b: Uint8Array, from: number, end: number): boolean {
  let j = from < end && (b[from] === DASH || b[from] === 0x2b) ? from + 1 : from;
  const spaces = j;
  while (j < end && b[j] === SPACE) j++;
  return j === end || (b[j] === HASH && j > spaces);
}

/**
 * The next `byte` at or after a position, remembered: the scan asks for growing positions, so a byte of the
 * text is searched about once, not once per line (a line's end is not a search's end).
 */
class NextByte {
  #at = -1;
  #from = 0;
  constructor(
    private readonly bytes: Uint8Array,
    private readonly byte: number,
  ) {}
  /** The first index ≥ `from` holding the byte; bytes.length if none. */
  from(from: number): number {
    if (this.#at < from || from < this.#from) {
      const k = this.bytes.indexOf(this.byte, from);
      this.#at = k < 0 ? this.bytes.length : k;
      this.#from = from;
    }
    return this.#at;
  }
}

/** Byte sequences that never take the fast path: `__proto__`, U+2028/U+2029 (line breaks in YAML 1.1), a BOM. */
const refusedSequences = ["__proto__", "\u2028", "\u2029", "\uFEFF"].map((s) => Buffer.from(s));
/** U+FFFD, which bytes decode to where they are not UTF-8 (and a text's encoding makes of a lone surrogate). */
const replacementCharacter = Buffer.from("\uFFFD");
/** C0 controls and DEL other than tab and newline (tabs are allowed only inside block scalars). */
const controlBytes = [...Array.from({ length: 0x20 }, (_, c) => c).filter((c) => c !== TAB && c !== NEWLINE), 0x7f];

/**
 * Whether the whole text is free of what the fast path refuses wherever it stands: invalid UTF-8 (the slow
 * path reads the decoded text), `\r`, control characters (C1 ones are U+0080–U+009F: 0xC2 0x80–0x9F),
 * NEL (one of them), `refusedSequences`, and U+FFFD in bytes given as such (`ownBytes`: osc.yaml's decoded
 * text took the slow path for it). One native search per byte or sequence, no copy.
 */
function textAllowed(bytes: Uint8Array, ownBytes: boolean): boolean {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (!isUtf8(buf)) return false;
  for (const c of controlBytes) if (buf.indexOf(c) >= 0) return false;
  for (let k = buf.indexOf(0xc2); k >= 0; k = buf.indexOf(0xc2, k + 1)) if ((buf[k + 1] as number) <= 0x9f) return false;
  return !refusedSequences.some((s) => buf.includes(s)) && !(ownBytes && buf.includes(replacementCharacter));
}

/**
 * Whether UTF-8 `bytes` stay inside the subset (see the module comment): the lines one by one, with what a
 * line leaves for the next (a block scalar, a completed value). `ownBytes`: given as bytes, not a text's encoding.
 */
function bytesEligible(bytes: Uint8Array, ownBytes = true): boolean {
  if (!textAllowed(bytes, ownBytes)) return false;
  const scan = new StructureScan(bytes);
  let blockParent = -1; // inside a block scalar: its content lines are indented more than this
  let blockContent = -1; // the indentation of its first content line
  let owner: number | undefined; // the previous line ended with a value owned by this column
  const tabs = new NextByte(bytes, TAB);
  for (let pos = 0; pos <= bytes.length; ) {
    let end = bytes.indexOf(NEWLINE, pos);
    if (end < 0) end = bytes.length;
    const line = pos;
    pos = end + 1;
    let ind = 0;
    while (line + ind < end && bytes[line + ind] === SPACE) ind++;
    if (blockParent >= 0) {
      if (line + ind === end) continue; // blank: content, or the end (both parsers agree or both fail)
      if (ind > blockParent) {
        if (blockContent < 0) blockContent = ind;
        else if (ind < blockContent) return false; // less indented than the first line: an error case
        continue;
      }
      blockParent = -1;
    }
    if (tabs.from(line) < end) return false; // tabs only inside block scalars
    if (line + ind === end || bytes[line + ind] === HASH) continue; // blank or comment only
    // More indented than a completed value: a multi-line plain scalar or an error; both go slow.
    if (owner !== undefined && ind > owner) return false;
    if (!scan.line(line, end, ind)) return false;
    owner = scan.valueOwner;
    if (scan.block >= 0) {
      blockParent = scan.block;
      blockContent = -1;
    }
  }
  return true;
}

/**
 * The scan of one structure line (outside block scalars) of a text's bytes at a time, and what the line
 * leaves open for the next lines; columns are byte offsets in the line. Nothing is made per line or token.
 */
class StructureScan {
  /** A block scalar opened on the line: its content is indented more than this; else -1. */
  block = -1;
  /** The line ends with a complete value: the following lines must not be indented more than this. */
  valueOwner: number | undefined;
  /** Whether the plain scalar that `#blockPlainEnd` or `#flowPlainEnd` ended is a key. */
  #isKey = false;
  readonly #colons: NextByte;
  readonly #hashes: NextByte;
  constructor(private readonly b: Uint8Array) {
    this.#colons = new NextByte(b, COLON);
    this.#hashes = new NextByte(b, HASH);
  }

  /** Scans the line [start, end) whose first `ind` bytes are spaces; false rejects the text. */
  line(start: number, end: number, ind: number): boolean {
    const b = this.b;
    let flow = 0;
    let keyCol = -1;
    let dashCol = -1;
    let valueEnd = false;
    this.block = -1;
    this.valueOwner = undefined;
    if (ind === 0 && (this.#startsWith(start, end, "---") || this.#startsWith(start, end, "...") || b[start] === 0x25)) return false;
    let i = start + ind;
    while (i < end) {
      const c = b[i] as number;
      if (c === SPACE) {
        i++;
        continue;
      }
      if (c === HASH) {
        if (i !== start && b[i - 1] !== SPACE) return false;
        break; // a comment ends the line
      }
      if (valueEnd && flow === 0) return false; // a second value after a complete one
      if (c === QUOTE || c === APOSTROPHE) {
        const close = this.#quotedEnd(i, end);
        if (close < 0) return false; // spans lines
        const after = close < end ? (b[close] as number) : EOL;
        if (!separatorAfter(after, flow > 0)) return false;
        if (after === COLON) {
          if (c === QUOTE && this.#escaped(i, close)) return false; // escaped key
          if (flow === 0) {
            const n = close + 1 < end ? (b[close + 1] as number) : EOL;
            if (keyCol >= 0 || !(n === EOL || n === SPACE)) return false;
            keyCol = i - start;
          }
          i = close + 1;
          continue;
        }
        if (flow === 0) valueEnd = true;
        i = close;
        continue;
      }
      if (c === DASH && (i + 1 === end || b[i + 1] === SPACE)) {
        if (flow > 0 || keyCol >= 0) return false;
        dashCol = i - start;
        i++;
        continue;
      }
      if (c === 0x5b || c === 0x7b) {
        flow++;
        i++;
        continue;
      }
      if (c === 0x5d || c === 0x7d) {
        if (--flow < 0) return false;
        i++;
        const after = i < end ? (b[i] as number) : EOL;
        if (after === COLON || !separatorAfter(after, flow > 0)) return false; // no collections as keys
        if (flow === 0) valueEnd = true;
        continue;
      }
      if (c === COMMA) {
        if (flow === 0) return false;
        i++;
        continue;
      }
      if (c === 0x7c || c === 0x3e) {
        // Block scalar header: only `|`, `|-`, `|+`, `>`, `>-`, `>+`, then at most a comment.
        if (flow > 0 || !blockHeaderRest(b, i + 1, end)) return false;
        const parent = keyCol >= 0 ? keyCol : dashCol;
        this.block = parent;
        return parent >= 0;
      }
      if (c === COLON) return false; // empty key
      // A plain scalar: up to ": " / ":" at the end (a key), " #", or the end; in flow also , [ ] { }.
      const token = i;
      i = flow > 0 ? this.#flowPlainEnd(i, end) : this.#blockPlainEnd(i, end);
      const isKey = this.#isKey;
      if (!this.#safeToken(token, i, isKey)) return false;
      if (isKey) {
        if (flow === 0 && keyCol >= 0) return false; // a second implicit key on one line
        if (flow === 0) keyCol = token - start;
        i++;
      } else if (flow === 0) valueEnd = true;
    }
    if (flow !== 0) return false; // flow collections must close on their line
    this.valueOwner = valueEnd ? (keyCol >= 0 ? keyCol : dashCol) : undefined;
    return true;
  }

  #startsWith(start: number, end: number, word: string): boolean {
    return end - start >= word.length && bytesAre(this.b, start, start + word.length, word, false);
  }

  /** Index after the closing quote of a single-line quoted scalar opening at `i`, or -1. */
  #quotedEnd(i: number, end: number): number {
    const b = this.b;
    const q = b[i];
    for (let j = i + 1; j < end; j++) {
      const c = b[j];
      if (q === QUOTE && c === BACKSLASH)
        j++; // backslash escape: skip the escaped byte (a multi-byte character's others are never quotes)
      else if (c === q) {
        if (q === APOSTROPHE && j + 1 < end && b[j + 1] === APOSTROPHE)
          j++; // '' inside single quotes
        else return j + 1;
      }
    }
    return -1;
  }

  /** Whether the bytes [from, to) hold a backslash. */
  #escaped(from: number, to: number): boolean {
    for (let j = from; j < to; j++) if (this.b[j] === BACKSLASH) return true;
    return false;
  }

  /**
   * Where a block-context plain scalar from `i` ends, and whether it is a key: the first colon followed by a
   * space or the line's end, or the space of the first " #". Found by native searches (each byte once), not
   * a loop per byte: its bulk is a file's base64 content (issue 27).
   */
  #blockPlainEnd(i: number, end: number): number {
    const b = this.b;
    let comment = end;
    for (let h = this.#hashes.from(i); h < end; h = this.#hashes.from(h + 1)) {
      if (b[h - 1] === SPACE) {
        comment = h - 1;
        break;
      }
    }
    for (let k = this.#colons.from(i); k < comment; k = this.#colons.from(k + 1)) {
      if (k + 1 === end || b[k + 1] === SPACE) {
        this.#isKey = true;
        return k;
      }
    }
    this.#isKey = false;
    return comment;
  }

  /** `#blockPlainEnd` inside a flow collection, where , [ ] { } end a scalar too and a colon followed by , ] } makes a key. */
  #flowPlainEnd(i: number, end: number): number {
    const b = this.b;
    let j = i;
    for (; j < end; j++) {
      const c = b[j];
      if (c === COLON) {
        const n = j + 1 < end ? b[j + 1] : EOL;
        if (n === EOL || n === SPACE || n === COMMA || n === 0x5d || n === 0x7d) {
          this.#isKey = true;
          return j;
        }
      } else if (c === COMMA || c === 0x5b || c === 0x5d || c === 0x7b || c === 0x7d || (c === SPACE && j + 1 < end && b[j + 1] === HASH))
        break;
    }
    this.#isKey = false;
    return j;
  }

  /**
   * Whether the plain scalar [from, to) (trailing spaces trimmed) is safe. Implicit keys are limited to 1024
   * characters; values are not (a file's base64 content: issue 27). A token ending in a non-ASCII character
   * (which trimEnd may trim: U+00A0, U+3000, …) or a key longer than 1000 bytes is judged as a string.
   */
  #safeToken(from: number, to: number, isKey: boolean): boolean {
    const b = this.b;
    let last = to;
    while (last > from && b[last - 1] === SPACE) last--;
    if ((b[last - 1] as number) >= 0x80 || (isKey && last - from > 1000)) {
      const token = tokenDecoder.decode(b.subarray(from, to)).trimEnd();
      return !(isKey && token.length > 1000) && safePlain(token, isKey);
    }
    return safePlainBytes(b, from, last, isKey);
  }
}

/** Whether Bun's parser may read `text` (see the module comment). */
export const fastYamlEligible = (text: string): boolean => bytesEligible(new TextEncoder().encode(text), false);

export type BunYaml = { parse(input: string | Uint8Array): unknown };

/** Bun's parser when this runtime has it (the agent always runs on Bun; tests too). */
function bunYaml(): BunYaml | undefined {
  const bun = (globalThis as { Bun?: { YAML?: BunYaml } }).Bun;
  return bun?.YAML;
}

/** The line that opens a big OSC's file list (gardenlet's layout), from a line start. */
const filesKeyLine = new TextEncoder().encode("\n  files:\n");
/** About this many bytes of the file list are parsed at a time. */
const filesGroupBytes = 1024 * 1024;

/** Columns of leading spaces of the line starting at `from`. */
function indentAt(bytes: Uint8Array, from: number): number {
  let i = from;
  while (bytes[i] === SPACE) i++;
  return i - from;
}

/** Whether the line starting at `from` (indented by `indent`) opens a block sequence item: `-` then a space or its end. */
const opensItem = (bytes: Uint8Array, from: number, indent: number): boolean =>
  bytes[from + indent] === DASH && (bytes[from + indent + 1] === SPACE || bytes[from + indent + 1] === NEWLINE);

/**
 * Bun's parse of eligible bytes whose bulk is `spec.files` (a big OSC), that list parsed a group of items at
 * a time: the parser's own transient memory is that of a group, not of the whole document (issue 27). The
 * rest of the document is parsed with the list's items cut out (`files:` then has no value) and the items
 * put back. Inside the fast path's subset a block sequence's items are the lines from an item's `- ` to
 * the next one at its indentation, so a group of them is a document of its own with the same values.
 * Undefined (the caller parses the whole) for any other layout.
 */
export function parseFilesInGroups(parser: BunYaml, bytes: Uint8Array): Record<string, unknown> | undefined {
  const key = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).indexOf(filesKeyLine);
  if (key < 0 || !underSpec(bytes, key)) return undefined;
  const start = key + filesKeyLine.length;
  const indent = indentAt(bytes, start);
  if (indent < 2 || !opensItem(bytes, start, indent)) return undefined;
  // The items: up to the first line less indented, or as indented but not an item.
  const items: Array<readonly [number, number]> = [];
  let groupStart = start;
  let end = start;
  for (let line = start; line < bytes.length; ) {
    const next = bytes.indexOf(NEWLINE, line);
    const lineEnd = next < 0 ? bytes.length : next + 1;
    const ind = indentAt(bytes, line);
    // Blank and comment-only lines carry no structure: they stay with the items around them.
    const blank = line + ind === lineEnd || bytes[line + ind] === NEWLINE || bytes[line + ind] === HASH;
    if (!blank && (ind < indent || (ind === indent && !opensItem(bytes, line, ind)))) break;
    if (!blank && ind === indent && line - groupStart >= filesGroupBytes) {
      items.push([groupStart, line]);
      groupStart = line;
    }
    end = lineEnd;
    line = lineEnd;
  }
  items.push([groupStart, end]);
  const rest = Buffer.concat([bytes.subarray(0, start), bytes.subarray(end)]);
  const doc = parser.parse(rest);
  const spec = isMapping(doc) ? doc["spec"] : undefined;
  if (!isMapping(spec) || !("files" in spec) || spec["files"] !== null) return undefined;
  const files: unknown[] = [];
  for (const [from, to] of items) {
    const group = parser.parse(bytes.subarray(from, to));
    if (!Array.isArray(group)) return undefined;
    for (const item of group) files.push(item);
  }
  spec["files"] = files;
  return doc as Record<string, unknown>;
}

/**
 * Whether the last unindented line before `newline` (not blank, not a comment) is `spec:`: the `files:`
 * found is spec's key, not a line of some top-level key's block scalar.
 */
function underSpec(bytes: Uint8Array, newline: number): boolean {
  for (let end = newline; end > 0; ) {
    const start = bytes.lastIndexOf(NEWLINE, end - 1) + 1;
    const c = bytes[start];
    if (c !== SPACE && c !== HASH && c !== NEWLINE && start < end)
      return Buffer.from(bytes.subarray(start, end)).toString("latin1") === "spec:";
    end = start - 1;
  }
  return false;
}

/** A plain mapping (what valibot's `v.object` reads too): any non-null object but an array. */
export const isMapping = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === "object" && !Array.isArray(x);

/**
 * The parsed mapping when the fast path applies, else undefined (the caller takes the slow path,
 * which also produces the error for anything the fast parser rejects).
 */
export function readYamlFast(text: string | Uint8Array): Record<string, unknown> | undefined {
  const parser = bunYaml();
  if (parser === undefined || !(typeof text === "string" ? fastYamlEligible(text) : bytesEligible(text))) return undefined;
  if (typeof text !== "string" && text.length >= bigTextChars) Bun.gc(true);
  let value: unknown;
  try {
    value = (typeof text !== "string" && text.length >= bigTextChars ? parseFilesInGroups(parser, text) : undefined) ?? parser.parse(text);
  } catch {
    // The slow path reports the error with its own message.
    return undefined;
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  return value as Record<string, unknown>;
}
// Issue 25: per file or line of a 1000-file apply (jit/top-tier.ts).
keepOutOfTopTier(
  isLetter,
  isDigit,
  digitLedString,
  bytesAre,
  safePlainBytes,
  separatorAfter,
  isMapping,
  NextByte.prototype.from,
  StructureScan.prototype.line,
);
