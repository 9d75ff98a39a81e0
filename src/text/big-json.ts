// JSON.parse for texts of megabytes whose bulk is one or a few long string values (a Secret of a big
// OSC: 27 MB, nearly all of it the base64 text of one data key). JSON.parse copies every string, so the
// event's text and its parsed value would hold those characters twice; here such a value is a slice of
// the text instead, and JavaScriptCore shares the characters of a slice with the text it came from.

import { longValueChars } from "./big.ts";

/** Characters JSON.parse would turn into something else (an escape) or refuse (a raw control character). */
const notVerbatim = /[\u0000-\u001f\\]/g;

/** The index after `i`'s run of JSON whitespace. */
function skipSpace(text: string, i: number): number {
  let j = i;
  for (let c = text.charCodeAt(j); c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = text.charCodeAt(++j));
  return j;
}

/** Whether the quote at `i` is escaped: an odd number of backslashes right before it. */
function escapedQuote(text: string, i: number): boolean {
  let n = 0;
  for (let j = i - 1; j >= 0 && text.charCodeAt(j) === 0x5c; j--) n++;
  return n % 2 === 1;
}

/**
 * The [open, close] quote positions of every string value of at least `longValueChars` characters
 * that JSON.parse would return verbatim (no escape, no control character); object keys are left out.
 * Undefined when the text does not even pair its quotes (JSON.parse then reports it).
 */
function longVerbatimStrings(text: string): Array<readonly [number, number]> | undefined {
  const spans: Array<readonly [number, number]> = [];
  // Outside a string JSON has no quote character, so quotes alternate between opening and closing.
  for (let open = text.indexOf('"'); open >= 0; ) {
    let close = text.indexOf('"', open + 1);
    while (close >= 0 && escapedQuote(text, close)) close = text.indexOf('"', close + 1);
    if (close < 0) return undefined;
    if (close - open - 1 >= longValueChars && text.charCodeAt(skipSpace(text, close + 1)) !== 0x3a /* ':' */) {
      notVerbatim.lastIndex = open + 1;
      const found = notVerbatim.exec(text);
      if (found === null || found.index > close) spans.push([open, close]);
    }
    open = text.indexOf('"', close + 1);
  }
  return spans;
}

/**
 * JSON.parse(text), with every long verbatim string value a slice of `text` (same value, characters
 * not copied). Any text JSON.parse refuses is refused the same way.
 */
export function parseJsonSharingLongStrings(text: string): unknown {
  const spans = longVerbatimStrings(text);
  // A placeholder that cannot occur in the text's own values: no `\u0000` escape anywhere in it.
  if (spans === undefined || spans.length === 0 || text.includes("\\u0000")) return JSON.parse(text);
  const placeholders = new Map<string, string>();
  const parts: string[] = [];
  let from = 0;
  for (const [open, close] of spans) {
    const placeholder = `\u0000${placeholders.size}`;
    placeholders.set(placeholder, text.slice(open + 1, close));
    parts.push(text.slice(from, open), JSON.stringify(placeholder));
    from = close + 1;
  }
  parts.push(text.slice(from));
  return JSON.parse(parts.join(""), (_key, value: unknown) => (typeof value === "string" ? (placeholders.get(value) ?? value) : value));
}
