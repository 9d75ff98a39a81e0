import { bigTextChars } from "../text/index.ts";

const NEWLINE = 0x0a;

/**
 * Yields the lines of a byte stream (UTF-8), skipping blank ones, each as `parse` makes it. Each chunk is
 * decoded as it arrives (its bytes are then garbage) and a line is joined once, when its end arrives: a
 * watch event of tens of megabytes (a big OSC Secret) arrives in hundreds of chunks, and re-joining the
 * text on every chunk copied it hundreds of times (issue 27). The line is parsed here, before the yield:
 * a suspended generator keeps what it yielded, and the consumer works on the event (an informer decodes
 * a big Secret's data) while the generator waits, so only the parsed form may be held then.
 */
export function readLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string>;
export function readLines<T>(stream: ReadableStream<Uint8Array>, parse: (line: string) => T): AsyncGenerator<T>;
export async function* readLines<T>(stream: ReadableStream<Uint8Array>, parse?: (line: string) => T): AsyncGenerator<T | string> {
  const decoder = new TextDecoder();
  const reader = stream.getReader();
  /** The unfinished line's text, chunk by chunk, and its length so far. */
  let pieces: string[] = [];
  let pending = 0;
  const add = (piece: string) => {
    pieces.push(piece);
    pending += piece.length;
  };
  const join = (last: Uint8Array): string => {
    add(decoder.decode(last));
    // The chunks' bytes (as much again as the text) are garbage: collected before the join copies the pieces.
    if (pending >= bigTextChars) Bun.gc(true);
    const text = pieces.length === 1 ? (pieces[0] as string) : pieces.join("");
    pieces = [];
    pending = 0;
    return text;
  };
  const line = (last: Uint8Array): string | undefined => {
    const text = join(last);
    // Its pieces are garbage now: collected before the parse makes another copy (issue 27).
    if (text.length >= bigTextChars) Bun.gc(true);
    const l = text.endsWith("\r") ? text.slice(0, -1) : text;
    return l.trim() === "" ? undefined : l;
  };
  const parsed = (text: string | undefined): T | string | undefined => (text === undefined || parse === undefined ? text : parse(text));
  // Held across a yield, not across the next read: the generator's frame would keep a line of tens
  // of megabytes alive until the next chunk arrives (minutes, on a quiet watch).
  let l: T | string | undefined;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      let start = 0;
      for (let nl = value.indexOf(NEWLINE); nl >= 0; nl = value.indexOf(NEWLINE, start)) {
        l = parsed(line(value.subarray(start, nl)));
        start = nl + 1;
        if (l !== undefined) yield l;
        l = undefined;
      }
      if (start < value.length) add(decoder.decode(value.subarray(start), { stream: true }));
    }
    l = parsed(line(new Uint8Array(0)));
    if (l !== undefined) yield l;
  } finally {
    // Early exit (consumer stopped, or abort): closing the reader closes the connection.
    reader.cancel().catch(() => {
      // The stream may already be errored; there is nothing left to release.
    });
    reader.releaseLock();
  }
}
