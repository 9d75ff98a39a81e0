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
 */
import { bigTextChars } from "../text/index.ts";

const SPACE = 0x20;
const HASH = 0x23;
const COLON = 0x3a;
const DASH = 0x2d;
const NEWLINE = 0x0a;

/** YAML 1.1 / 1.2 boolean and null words in any letter case (plain scalars only). */
const specialWords = /^(?:y|n|yes|no|on|off|true|false|null|nan|inf)$/i;
const safeInt = /^(?:0|-?[1-9][0-9]{0,14})$/;

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

/** A plain scalar whose resolution is the same in YAML 1.1, YAML 1.2 core and Bun. */
function safePlain(token: string, isKey: boolean): boolean {
  const c = token.charCodeAt(0);
  if (isLetter(c) || c === 0x2f || c === 0x5f || c === 0x24 || c === 0x28) {
    if (!specialWords.test(token)) return true;
    return !isKey && (token === "true" || token === "false" || token === "null");
  }
  if (isKey) return false;
  if (digitLedString(token)) return true;
  return token === "~" || safeInt.test(token);
}

/** Index after the closing quote of a single-line quoted scalar opening at `i`, or -1. */
function quotedEnd(line: string, i: number): number {
  const q = line.charCodeAt(i);
  for (let j = i + 1; j < line.length; j++) {
    const c = line.charCodeAt(j);
    if (q === 0x22 && c === 0x5c)
      j++; // backslash escape: skip the escaped character
    else if (c === q) {
      if (q === 0x27 && line.charCodeAt(j + 1) === 0x27)
        j++; // '' inside single quotes
      else return j + 1;
    }
  }
  return -1;
}

const leadingSpaces = (line: string): number => {
  let n = 0;
  while (line.charCodeAt(n) === SPACE) n++;
  return n;
};

/** Whether a character may follow a complete scalar or collection on a line. */
const separatorAfter = (c: number, flow: boolean): boolean =>
  Number.isNaN(c) || c === SPACE || c === COLON || (flow && (c === 0x2c || c === 0x5d || c === 0x7d));

/** What one structure line leaves open for the next lines. */
interface LineScan {
  /** A block scalar opened here: its content is indented more than this; else -1. */
  readonly block: number;
  /** The line ends with a complete value: the following lines must not be indented more than this. */
  readonly valueOwner: number | undefined;
}

/** Where a plain scalar may end: a colon (a key if a separator follows), " #"; in flow also , [ ] { }. */
const plainStop = /:| #/g;
const plainStopFlow = /:| #|[,[\]{}]/g;

/** Scans one structure line (outside block scalars); undefined rejects the text. */
function scanLine(line: string): LineScan | undefined {
  let flow = 0;
  let keyCol = -1;
  let dashCol = -1;
  let valueEnd = false;
  let i = leadingSpaces(line);
  if (i === 0 && (line.startsWith("---") || line.startsWith("...") || line.startsWith("%"))) return undefined;
  const done = (): LineScan | undefined => {
    if (flow !== 0) return undefined; // flow collections must close on their line
    return { block: -1, valueOwner: valueEnd ? (keyCol >= 0 ? keyCol : dashCol) : undefined };
  };
  while (i < line.length) {
    const c = line.charCodeAt(i);
    if (c === SPACE) {
      i++;
      continue;
    }
    if (c === HASH) return i === 0 || line.charCodeAt(i - 1) === SPACE ? done() : undefined;
    if (valueEnd && flow === 0) return undefined; // a second value after a complete one
    if (c === 0x22 || c === 0x27) {
      const end = quotedEnd(line, i);
      if (end < 0) return undefined; // spans lines
      const after = line.charCodeAt(end);
      if (!separatorAfter(after, flow > 0)) return undefined;
      if (after === COLON) {
        if (c === 0x22 && line.slice(i, end).includes("\\")) return undefined; // escaped key
        if (flow === 0) {
          const n = line.charCodeAt(end + 1);
          if (keyCol >= 0 || !(Number.isNaN(n) || n === SPACE)) return undefined;
          keyCol = i;
        }
        i = end + 1;
        continue;
      }
      if (flow === 0) valueEnd = true;
      i = end;
      continue;
    }
    if (c === DASH && (i + 1 === line.length || line.charCodeAt(i + 1) === SPACE)) {
      if (flow > 0 || keyCol >= 0) return undefined;
      dashCol = i;
      i++;
      continue;
    }
    if (c === 0x5b || c === 0x7b) {
      flow++;
      i++;
      continue;
    }
    if (c === 0x5d || c === 0x7d) {
      if (--flow < 0) return undefined;
      i++;
      const after = line.charCodeAt(i);
      if (after === COLON || !separatorAfter(after, flow > 0)) return undefined; // no collections as keys
      if (flow === 0) valueEnd = true;
      continue;
    }
    if (c === 0x2c) {
      if (flow === 0) return undefined;
      i++;
      continue;
    }
    if (c === 0x7c || c === 0x3e) {
      // Block scalar header: only `|`, `|-`, `|+`, `>`, `>-`, `>+`, then at most a comment.
      if (flow > 0 || !/^[-+]?(?: +#.*)? *$/.test(line.slice(i + 1))) return undefined;
      const parent = keyCol >= 0 ? keyCol : dashCol;
      return parent >= 0 ? { block: parent, valueOwner: undefined } : undefined;
    }
    if (c === COLON) return undefined; // empty key
    // A plain scalar: up to ": " / ":" at the end (a key), " #", or the end; in flow also , [ ] { }.
    // The candidates are found by a native regex scan, not a loop per character (the agent's interpreter).
    const start = i;
    let isKey = false;
    const stop = flow > 0 ? plainStopFlow : plainStop;
    stop.lastIndex = i;
    for (;;) {
      const m = stop.exec(line);
      if (m === null) {
        i = line.length;
        break;
      }
      i = m.index;
      if (line.charCodeAt(i) !== COLON) break; // " #", or in flow one of , [ ] { }
      const n = line.charCodeAt(i + 1);
      if (Number.isNaN(n) || n === SPACE || (flow > 0 && (n === 0x2c || n === 0x5d || n === 0x7d))) {
        isKey = true;
        break;
      }
      stop.lastIndex = i + 1;
    }
    const token = line.slice(start, i).trimEnd();
    // Implicit keys are limited to 1024 characters; values are not (a file's base64 content: issue 27).
    if ((isKey && token.length > 1000) || !safePlain(token, isKey)) return undefined;
    if (isKey) {
      if (flow === 0 && keyCol >= 0) return undefined; // a second implicit key on one line
      if (flow === 0) keyCol = start;
      i++;
    } else if (flow === 0) valueEnd = true;
  }
  return done();
}

/** Whether Bun's parser may read `text` (see the module comment). */
export function fastYamlEligible(text: string): boolean {
  return new EligibilityScan().window(text);
}

/**
 * The scan of fastYamlEligible, window by window: a window is whole lines (it ends at a line break or
 * at the end of the text), and what a line leaves for the next (a block scalar, a completed value) is
 * carried from one window to the next. A blank line at a window's end changes nothing.
 */
class EligibilityScan {
  #blockParent = -1; // inside a block scalar: its content lines are indented more than this
  #blockContent = -1; // the indentation of its first content line
  #owner: number | undefined; // the previous line ended with a value owned by this column

  window(text: string): boolean {
    if (text.includes("__proto__") || text.includes("\r") || text.includes("\uFEFF")) return false;
    // Unicode line/paragraph separators and NEL were line breaks in YAML 1.1.
    if (/[\u0085\u2028\u2029]/.test(text)) return false;
    // C0/C1 controls and DEL anywhere but tab and newline: one native scan instead of a loop per line
    // (the agent's interpreter spent ~40% of this function there); tabs are checked per line below.
    if (controls.test(text)) return false;
    let pos = 0;
    while (pos <= text.length) {
      let end = text.indexOf("\n", pos);
      if (end < 0) end = text.length;
      const line = text.slice(pos, end);
      pos = end + 1;
      const ind = leadingSpaces(line);
      if (this.#blockParent >= 0) {
        if (ind === line.length) continue; // blank: content, or the end (both parsers agree or both fail)
        if (ind > this.#blockParent) {
          if (this.#blockContent < 0) this.#blockContent = ind;
          else if (ind < this.#blockContent) return false; // less indented than the first line: an error case
          continue;
        }
        this.#blockParent = -1;
      }
      if (line.includes("\t")) return false; // tabs only inside block scalars
      if (ind === line.length || line.charCodeAt(ind) === HASH) continue; // blank or comment only
      // More indented than a completed value: a multi-line plain scalar or an error; both go slow.
      if (this.#owner !== undefined && ind > this.#owner) return false;
      const scan = scanLine(line);
      if (scan === undefined) return false;
      this.#owner = scan.valueOwner;
      if (scan.block >= 0) {
        this.#blockParent = scan.block;
        this.#blockContent = -1;
      }
    }
    return true;
  }
}

/** C0/C1 controls and DEL other than tab and newline (tabs are allowed only inside block scalars). */
const controls = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

export type BunYaml = { parse(input: string | Uint8Array): unknown };

/** Bun's parser when this runtime has it (the agent always runs on Bun; tests too). */
function bunYaml(): BunYaml | undefined {
  const bun = (globalThis as { Bun?: { YAML?: BunYaml } }).Bun;
  return bun?.YAML;
}

/** The bytes of osc.yaml decoded and scanned at a time (then up to a line break). */
const eligibilityWindowBytes = 1024 * 1024;

/**
 * Whether Bun may parse these UTF-8 bytes as they are: they decode without replacement characters
 * (the slow path reads the decoded text), carry no byte order mark, and their text is eligible. The
 * text is decoded and scanned a window of lines at a time (a line break never splits a UTF-8
 * sequence), so a big OSC's text never exists whole beside its bytes; the windows' garbage is
 * collected as the scan goes.
 */
function bytesEligible(bytes: Uint8Array): boolean {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return false;
  const decoder = new TextDecoder();
  const scan = new EligibilityScan();
  let scanned = 0;
  for (let from = 0; from < bytes.length; ) {
    const next = from + eligibilityWindowBytes >= bytes.length ? -1 : bytes.indexOf(NEWLINE, from + eligibilityWindowBytes);
    const to = next < 0 ? bytes.length : next + 1;
    const text = decoder.decode(bytes.subarray(from, to));
    if (text.includes("\uFFFD") || !scan.window(text)) return false;
    scanned += to - from;
    from = to;
    if (scanned >= bigTextChars) {
      Bun.gc(false);
      scanned = 0;
    }
  }
  return true;
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

const isMapping = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === "object" && !Array.isArray(x);

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
