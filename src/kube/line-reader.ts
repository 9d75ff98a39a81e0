const NEWLINE = 0x0a;
/** A line this long (a big OSC Secret's event) has its bytes collected before it is parsed. */
const bigLine = 4 * 1024 * 1024;

/**
 * Yields the lines of a byte stream (UTF-8), skipping blank ones. A line is decoded once, when its end
 * arrives: a watch event of tens of megabytes (a big OSC Secret) arrives in hundreds of chunks, and
 * re-joining the text on every chunk copied it hundreds of times (issue 27).
 */
export async function* readLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  const reader = stream.getReader();
  /** The unfinished line's bytes, chunk by chunk. */
  let parts: Uint8Array[] = [];
  let partsLength = 0;
  const decode = (last: Uint8Array): string => {
    const bytes = parts.length === 0 ? last : Buffer.concat([...parts, last]);
    parts = [];
    partsLength = 0;
    return decoder.decode(bytes);
  };
  const line = (last: Uint8Array): string | undefined => {
    const big = partsLength + last.length >= bigLine;
    const text = decode(last);
    // Its chunks and their concatenation are garbage now: collected before the parse makes a third
    // copy (a 27 MB event peaked at 4 × its size otherwise, issue 27).
    if (big) Bun.gc(true);
    const l = text.endsWith("\r") ? text.slice(0, -1) : text;
    return l.trim() === "" ? undefined : l;
  };
  // Held across a yield, not across the next read: the generator's frame would keep a line of tens
  // of megabytes alive until the next chunk arrives (minutes, on a quiet watch).
  let l: string | undefined;
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
      if (start < value.length) {
        parts.push(value.subarray(start));
        partsLength += value.length - start;
      }
    }
    l = line(new Uint8Array(0));
    if (l !== undefined) yield l;
  } finally {
    // Early exit (consumer stopped, or abort): closing the reader closes the connection.
    reader.cancel().catch(() => {
      // The stream may already be errored; there is nothing left to release.
    });
    reader.releaseLock();
  }
}
