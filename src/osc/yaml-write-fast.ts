import { keepOutOfTopTier } from "../jit/index.ts";
import { yamlPackage } from "../config/index.ts";
import { digitLedString } from "./yaml-fast.ts";

/**
 * A direct writer for the state files' YAML: the bytes `writeYaml` (the `yaml` package with sorted keys,
 * sequences not indented, no folding, YAML 1.1) produces, without building its document tree (a
 * 1000-file change set took 40–60 ms and most of the apply's garbage that way).
 *
 * It covers plain objects, arrays, safe integers, booleans, null and strings, and gives up (undefined,
 * the caller then uses `writeYaml`) on anything else: empty or nested sequences, keys that need quoting,
 * multi-line strings that need an indentation indicator or keep-chomping, control characters, etc.
 * Single-line strings that are not certainly plain are rendered by the `yaml` package itself.
 */

const specialWords = /^(?:y|n|yes|no|on|off|true|false|null|nan|inf|~)$/i;
/**
 * Control characters and lone surrogates: `yaml` double-quotes those. The `u` flag makes the surrogate range
 * match only a lone one: a pair (an emoji) is one character that `yaml` writes as it is, so a file with an
 * emoji keeps the direct writer (without it, a 20 MB change set went through the `yaml` package).
 */
const needsEscape = /[\x00-\x08\x0b-\x1f\x7f-\x9f\uD800-\uDFFF]/u;
const plainStart = /^[A-Za-z/_$(]/;
const plainKey = /^[A-Za-z_][A-Za-z0-9_./-]*$/;

const options = { sortMapEntries: true, indentSeq: false, lineWidth: 0, minContentWidth: 0, version: "1.1" } as const;

class Unsupported extends Error {}

/** A single-line string as a block-context value: plain when certain, else as `yaml` renders it. */
function inlineString(s: string, rendered: Map<string, string>): string {
  if (s === "") return '""';
  // A checksum: `yaml` writes it plain too (yaml-fast.ts digitLedString), without asking it each time.
  if (digitLedString(s)) return s;
  if (
    plainStart.test(s) &&
    !needsEscape.test(s) &&
    !s.includes("\t") &&
    !s.includes(": ") &&
    !s.includes(" #") &&
    !s.endsWith(" ") &&
    !s.endsWith(":") &&
    !specialWords.test(s)
  ) {
    return s;
  }
  const known = rendered.get(s);
  if (known !== undefined) return known;
  const out = yamlPackage().stringify({ k: s }, options);
  if (!out.startsWith("k: ") || out.indexOf("\n") !== out.length - 1) throw new Unsupported();
  rendered.set(s, out.slice(3, -1));
  return out.slice(3, -1);
}

/**
 * A multi-line string as a literal block (`|` or `|-`), content indented to `indent` (yaml's
 * blockString), in three parts: the indicator line with the first line's indentation, the body, and
 * the whitespace after the body.
 */
function blockString(s: string, indent: string): readonly [string, string, string] {
  // Leading whitespace needs an indentation indicator, whitespace after the last newline a quoted
  // string, trailing newlines beyond one keep-chomping: all left to `yaml`.
  if (needsEscape.test(s) || /^[ \n\t]/.test(s) || /\n[\t ]+$/.test(s)) throw new Unsupported();
  let end = s.length;
  while (end > 0 && (s[end - 1] === " " || s[end - 1] === "\t" || s[end - 1] === "\n")) end--;
  const tail = s.slice(end);
  const nl = tail.indexOf("\n");
  if (nl >= 0 && nl !== tail.length - 1) throw new Unsupported();
  const chomp = nl < 0 ? "-" : "";
  const rest = nl < 0 ? tail : tail.slice(0, -1);
  const body = s.slice(0, end).replace(/\n+/g, (m) => m + indent);
  return [`|${chomp}\n${indent}`, body, rest];
}

/** A scalar other than a multi-line string. */
function inlineScalar(v: unknown, rendered: Map<string, string>): string {
  if (typeof v === "string") return inlineString(v, rendered);
  if (typeof v === "boolean") return v ? "true" : "false";
  if (v === null) return "null";
  if (typeof v === "number" && Number.isSafeInteger(v) && !Object.is(v, -0)) return String(v);
  throw new Unsupported();
}

/**
 * Where the lines go. A line is `head` and up to three more parts (the separator with a value, a block
 * string's body, its trailing whitespace), handed over apart so that a streaming sink gets a big value
 * as the string the caller holds, not joined to its key (a copy).
 */
interface Sink {
  line(head: string, a?: string, b?: string, c?: string): void;
}

/** The sink, and strings the `yaml` package rendered already (in this call or its check, see streamYamlFast). */
interface Out {
  readonly sink: Sink;
  readonly rendered: Map<string, string>;
}

/** Indentation strings by width, built once (a 1000-file change set asked for ~20 000 of them). */
const pads: string[] = [];
const pad = (width: number): string => (pads[width] ??= " ".repeat(width));

/** Own keys in code-unit order (what `sortMapEntries` does); most objects arrive sorted already. */
function sortedKeys(m: Record<string, unknown>): string[] {
  const keys = Object.keys(m);
  for (let i = 1; i < keys.length; i++) {
    if ((keys[i - 1] as string) > (keys[i] as string)) return keys.sort();
  }
  return keys;
}

const isMap = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype;

/** `head` is the line so far (`key:` or `- `); the value's lines follow, owned by column `col`. */
function value(w: Out, head: string, v: unknown, col: number, afterDash: boolean): void {
  const { sink } = w;
  if (Array.isArray(v)) {
    if (v.length === 0 || afterDash) throw new Unsupported();
    sink.line(head);
    sequence(w, v, col);
  } else if (isMap(v)) {
    const keys = sortedKeys(v);
    if (keys.length === 0) sink.line(head, afterDash ? "{}" : " {}");
    else if (afterDash) mapping(w, v, keys, col + 2, head);
    else {
      sink.line(head);
      mapping(w, v, keys, col + 2, pad(col + 2));
    }
  } else if (typeof v === "string" && v.includes("\n")) {
    const [indicator, body, rest] = blockString(v, pad(col + 2));
    sink.line(head, afterDash ? indicator : ` ${indicator}`, body, rest);
  } else {
    sink.line(head, afterDash ? "" : " ", inlineScalar(v, w.rendered));
  }
}

function mapping(w: Out, m: Record<string, unknown>, keys: readonly string[], col: number, firstPrefix: string): void {
  const indent = pad(col);
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as string;
    if (k.length > 1000 || !plainKey.test(k) || specialWords.test(k)) throw new Unsupported();
    const v = m[k];
    if (v === undefined) throw new Unsupported();
    value(w, `${i === 0 ? firstPrefix : indent}${k}:`, v, col, false);
  }
}

function sequence(w: Out, items: readonly unknown[], col: number): void {
  const head = `${pad(col)}- `;
  for (const item of items) {
    if (item === undefined) throw new Unsupported();
    value(w, head, item, col, true);
  }
}

/** Writes `root`'s lines into `sink`; false when it is outside the covered subset (the sink may have had some). */
function writeInto(root: Record<string, unknown>, sink: Sink, rendered: Map<string, string>): boolean {
  const keys = sortedKeys(root);
  if (keys.length === 0) {
    sink.line("{}");
    return true;
  }
  try {
    mapping({ sink, rendered }, root, keys, 0, "");
    return true;
  } catch (err) {
    if (err instanceof Unsupported) return false;
    throw err;
  }
}

/** `writeYaml`'s exact output for `value`, or undefined when it is outside the covered subset. */
export function writeYamlFast(root: unknown): string | undefined {
  if (!isMap(root)) return undefined;
  const lines: string[] = [];
  const sink: Sink = {
    line: (head, a, b, c) => {
      // Template literals: one rope of up to three parts per line, as a line was before the sink (a `+`
      // chain nests a rope per part: +2-4 MB over a 5,000-file OSC's ~35,000 lines until they are joined).
      lines.push(a === undefined ? head : b === undefined ? `${head}${a}` : c === undefined ? `${head}${a}${b}` : `${head}${a}${b}${c}`);
    },
  };
  keepOutOfTopTier(sink.line); // per line, like the functions at the end of the file
  if (!writeInto(root, sink, new Map())) return undefined;
  // The final newline joined in, not appended: a 20 MB text plus "\n" is a rope that the write copies flat.
  lines.push("");
  return lines.join("\n");
}

/** Text pushed out as UTF-8 bytes, chunk by chunk: `write` is done with a chunk when it returns (the buffer is reused). */
export interface ChunkedText {
  writeTo(write: (chunk: Uint8Array) => void): void;
}

/** Bytes up to which `streamYamlFast`'s check pass keeps what it encoded (see there). */
const keptBytesAtMost = 1024 * 1024;

/** A record's encoded length the last time it was written: the first buffer's size for the next encode. */
export interface EncodedSize {
  bytes: number;
}

/** Room beyond the previous encode's length, so that a record a little longer still fits one buffer. */
const firstChunkSlack = 4 * 1024;

/**
 * `writeYamlFast`'s output as UTF-8 without the text itself (issue 27: a 20 MB change set was a 20 MB
 * string, its lines and its encoded copy at once), or undefined when `root` is outside the covered
 * subset. `writeTo` encodes each part of each line into one reused buffer of `chunkBytes`, so a big
 * value is copied only into that buffer, a piece at a time.
 *
 * A first pass checks `root` before anything is written, so a refusal never comes after bytes went out.
 * That pass encodes too, and keeps its bytes while they stay within `keepBytes`: a small document (a
 * 1000-file change set ≈ 100 KB) is then walked and encoded once, and `writeTo` hands over those chunks.
 * Past `keepBytes` it drops them and only checks; `writeTo` then reads `root` again: it must not change
 * in between (give it a copy, e.g. toPlain's).
 *
 * The kept chunks are the first pass's own buffers, the first one sized by `size` (the bytes of the same
 * record's previous encode, updated here) and each next one twice as big, up to `chunkBytes`: issue 25,
 * a 256 KiB buffer plus a copy of its ≈ 100 KB for each write of a 1000-file apply's change set.
 */
export function streamYamlFast(
  root: unknown,
  chunkBytes = 256 * 1024,
  keepBytes = keptBytesAtMost,
  size: EncodedSize = { bytes: 0 },
): ChunkedText | undefined {
  if (!isMap(root)) return undefined;
  const rendered = new Map<string, string>();
  let kept: Uint8Array[] | undefined = [];
  let keptBytes = 0;
  const firstBytes = Math.min(chunkBytes, keepBytes, size.bytes + firstChunkSlack);
  const first = new ChunkWriter(
    firstBytes,
    (chunk) => {
      keptBytes += chunk.length;
      if (keptBytes > keepBytes) kept = undefined;
      else kept?.push(chunk); // the writer's own buffer: it takes a new one for the next chunk
    },
    chunkBytes,
  );
  const checked: Sink = {
    line: (head, a, b, c) => {
      if (kept === undefined) return; // too big to keep: checking only
      first.put(head);
      if (a !== undefined) first.put(a);
      if (b !== undefined) first.put(b);
      if (c !== undefined) first.put(c);
      first.put("\n");
    },
  };
  keepOutOfTopTier(checked.line);
  if (!writeInto(root, checked, rendered)) return undefined;
  if (kept !== undefined) {
    first.finish();
    size.bytes = keptBytes;
  }
  const chunks: readonly Uint8Array[] | undefined = kept;
  if (chunks !== undefined) {
    return {
      writeTo(write) {
        for (const chunk of chunks) write(chunk);
      },
    };
  }
  return {
    writeTo(write) {
      const out = new ChunkWriter(chunkBytes, write);
      const sink: Sink = {
        line: (head, a, b, c) => {
          out.put(head);
          if (a !== undefined) out.put(a);
          if (b !== undefined) out.put(b);
          if (c !== undefined) out.put(c);
          out.put("\n");
        },
      };
      keepOutOfTopTier(sink.line); // per line, like the functions at the end of the file
      // The check above accepted it: only a changed `root` gets here.
      if (!writeInto(root, sink, rendered)) throw new Error("the YAML writer refused a value it had accepted");
      out.finish();
    },
  };
}

const encoder = new TextEncoder();

/**
 * Encodes strings as UTF-8 into one buffer, handed to `write` whenever the next string does not fit.
 * A string that fits is written at the buffer's offset (Buffer#write): encodeInto needs a view per call,
 * and a view per line part was ~8 MB of garbage over a 5,000-file OSC's ~200,000 parts.
 * With `growTo` the buffer is not reused: `write` keeps each chunk, and the next one is a new buffer twice
 * the last one's size, at most `growTo`.
 */
class ChunkWriter {
  private buf: Buffer;
  private used = 0;

  constructor(
    size: number,
    private readonly write: (chunk: Uint8Array) => void,
    private readonly growTo?: number,
  ) {
    // Room for any one character (4 bytes), so every round makes progress.
    this.buf = Buffer.allocUnsafe(Math.max(size, 4));
  }

  put(s: string): void {
    // At most 3 bytes per UTF-16 code unit (a pair's 4 bytes are 2 units): most strings need no count.
    const room = this.buf.length - this.used;
    if (s.length * 3 > room) {
      const bytes = Buffer.byteLength(s, "utf8");
      if (bytes > room) {
        this.flush();
        if (bytes > this.buf.length) {
          this.putLong(s);
          return;
        }
      }
    }
    this.used += this.buf.write(s, this.used, "utf8");
  }

  /** A string longer than the buffer, a bufferful at a time (never a character split). */
  private putLong(s: string): void {
    let rest = s;
    for (;;) {
      const { read, written } = encoder.encodeInto(rest, this.buf.subarray(this.used));
      this.used += written;
      if (read === rest.length) return;
      this.flush(); // full, or too little room for the next character
      rest = rest.slice(read);
    }
  }

  /** Hands the bytes so far to `write`, with room for more after. */
  flush(): void {
    if (this.used === 0) return;
    this.finish();
    if (this.growTo !== undefined) this.buf = Buffer.allocUnsafe(Math.max(Math.min(this.buf.length * 2, this.growTo), 4));
  }

  /** Hands the last bytes to `write`. */
  finish(): void {
    if (this.used === 0) return;
    this.write(this.buf.subarray(0, this.used));
    this.used = 0;
  }
}

// Issue 25: these run once per node of a state file (a 1000-file OSC's change set and last-applied hold
// ~10,000 each); see jit/top-tier.ts.
keepOutOfTopTier(value, mapping, sequence, inlineString, inlineScalar, sortedKeys, ChunkWriter.prototype.put, isMap, pad);
