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

/** A multi-line string as a literal block (`|` or `|-`), content indented to `indent` (yaml's blockString). */
function blockString(s: string, indent: string): string {
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
  return `|${chomp}\n${indent}${body}${rest}`;
}

function scalar(v: unknown, indent: string, rendered: Map<string, string>): string {
  if (typeof v === "string") return v.includes("\n") ? blockString(v, indent) : inlineString(v, rendered);
  if (typeof v === "boolean") return v ? "true" : "false";
  if (v === null) return "null";
  if (typeof v === "number" && Number.isSafeInteger(v) && !Object.is(v, -0)) return String(v);
  throw new Unsupported();
}

/** The output lines, and strings the `yaml` package rendered already in this call. */
interface Out {
  readonly lines: string[];
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
  const { lines } = w;
  if (Array.isArray(v)) {
    if (v.length === 0 || afterDash) throw new Unsupported();
    lines.push(head);
    sequence(w, v, col);
  } else if (isMap(v)) {
    const keys = sortedKeys(v);
    if (keys.length === 0) lines.push(`${head}${afterDash ? "" : " "}{}`);
    else if (afterDash) mapping(w, v, keys, col + 2, head);
    else {
      lines.push(head);
      mapping(w, v, keys, col + 2, pad(col + 2));
    }
  } else {
    lines.push(`${head}${afterDash ? "" : " "}${scalar(v, pad(col + 2), w.rendered)}`);
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

/** `writeYaml`'s exact output for `value`, or undefined when it is outside the covered subset. */
export function writeYamlFast(root: unknown): string | undefined {
  if (!isMap(root)) return undefined;
  const keys = sortedKeys(root);
  if (keys.length === 0) return "{}\n";
  const lines: string[] = [];
  try {
    mapping({ lines, rendered: new Map() }, root, keys, 0, "");
  } catch (err) {
    if (err instanceof Unsupported) return undefined;
    throw err;
  }
  // The final newline joined in, not appended: a 20 MB text plus "\n" is a rope that the write copies flat.
  lines.push("");
  return lines.join("\n");
}
