import { bigTextChars, longValueChars } from "../text/index.ts";

const NEWLINE = 0x0a;
/**
 * From this many bytes a line goes to the BigLine: its first bytes (held until then, with the chunks they
 * came in) are the garbage a big line starts with.
 */
const bigLineBytes = longValueChars;
/** How many bytes of a big line are taken between two collections of their garbage. */
const bigLineCollectBytes = 2 * 1024 * 1024;

/** A line too long to be held as one text, taken chunk by chunk (a big Secret's watch event). */
export interface BigLine<T> {
  add(bytes: Uint8Array): void;
  /** The line's parsed form (what `parse` makes of a short line). */
  end(): T;
}

/**
 * Yields the lines of a byte stream (UTF-8), skipping blank ones, each as `parse` makes it. A line's bytes
 * are kept as they arrive and decoded once, when its end arrives: a watch event of tens of megabytes (a
 * big OSC Secret) arrives in hundreds of chunks, and re-joining the text on every chunk copied it hundreds
 * of times (issue 27). With `bigLine`, a line of 1 MiB or more goes to a BigLine as it arrives
 * instead, never held whole. The line is parsed here, before the yield: a suspended generator keeps what it
 * yielded, and the consumer works on the event (an informer decodes a big Secret's data) while the
 * generator waits, so only the parsed form may be held then.
 */
export function readLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string>;
export function readLines<T>(stream: ReadableStream<Uint8Array>, parse: (line: string) => T, bigLine?: () => BigLine<T>): AsyncGenerator<T>;
export async function* readLines<T>(
  stream: ReadableStream<Uint8Array>,
  parse?: (line: string) => T,
  bigLine?: () => BigLine<T>,
): AsyncGenerator<T | string> {
  const decoder = new TextDecoder();
  const reader = stream.getReader();
  /** The unfinished line's bytes, chunk by chunk, and their length so far; or the BigLine taking it. */
  let pieces: Uint8Array[] = [];
  let pending = 0;
  let big: BigLine<T> | undefined;
  /** Bytes given to `big` since the last collection. */
  let taken = 0;
  const add = (piece: Uint8Array) => {
    if (piece.length === 0) return;
    if (big !== undefined) {
      big.add(piece);
      taken += piece.length;
      // The chunks already taken and what `big` made of them on the way are garbage (twice the bytes):
      // collected as the line streams in (a young-generation collection), not left to pile up beside it.
      if (taken >= bigLineCollectBytes) {
        Bun.gc(false);
        taken = 0;
      }
      return;
    }
    pieces.push(piece);
    pending += piece.length;
    if (bigLine === undefined || pending < bigLineBytes) return;
    big = bigLine();
    for (const p of pieces) big.add(p);
    pieces = [];
    pending = 0;
  };
  const text = (): string => {
    const bytes = pieces.length === 1 ? (pieces[0] as Uint8Array) : Buffer.concat(pieces, pending);
    pieces = [];
    // The chunks are garbage once joined: collected before the decode makes the text (issue 27).
    if (pending >= bigTextChars) Bun.gc(true);
    pending = 0;
    return decoder.decode(bytes);
  };
  const line = (last: Uint8Array): T | string | undefined => {
    add(last);
    if (big !== undefined) {
      const done = big;
      big = undefined;
      taken = 0;
      return done.end();
    }
    const full = text();
    // Its bytes are garbage now: collected before the parse makes another copy (issue 27).
    if (full.length >= bigTextChars) Bun.gc(true);
    const l = full.endsWith("\r") ? full.slice(0, -1) : full;
    if (l.trim() === "") return undefined;
    return parse === undefined ? l : parse(l);
  };
  // Held across a yield, not across the next read: the generator's frame would keep a line of tens
  // of megabytes alive until the next chunk arrives (minutes, on a quiet watch).
  let l: T | string | undefined;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      let start = 0;
      for (let nl = value.indexOf(NEWLINE); nl >= 0; nl = value.indexOf(NEWLINE, start)) {
        l = line(value.subarray(start, nl));
        start = nl + 1;
        if (l !== undefined) yield l;
        l = undefined;
      }
      // Kept as a copy (the chunk's other lines are done); a BigLine takes it at once.
      if (start < value.length) add(big !== undefined ? value.subarray(start) : value.slice(start));
    }
    l = pending > 0 || big !== undefined ? line(new Uint8Array(0)) : undefined;
    if (l !== undefined) yield l;
  } finally {
    // Early exit (consumer stopped, or abort): closing the reader closes the connection.
    reader.cancel().catch(() => {
      // The stream may already be errored; there is nothing left to release.
    });
    reader.releaseLock();
  }
}
