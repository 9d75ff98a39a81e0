const NEWLINE = 0x0a;

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
  const line = (last: Uint8Array): string | undefined => {
    const bytes = parts.length === 0 ? last : Buffer.concat([...parts, last]);
    parts = [];
    const text = decoder.decode(bytes);
    const l = text.endsWith("\r") ? text.slice(0, -1) : text;
    return l.trim() === "" ? undefined : l;
  };
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      let start = 0;
      for (let nl = value.indexOf(NEWLINE); nl >= 0; nl = value.indexOf(NEWLINE, start)) {
        const l = line(value.subarray(start, nl));
        start = nl + 1;
        if (l !== undefined) yield l;
      }
      if (start < value.length) parts.push(value.subarray(start));
    }
    const rest = line(new Uint8Array(0));
    if (rest !== undefined) yield rest;
  } finally {
    // Early exit (consumer stopped, or abort): closing the reader closes the connection.
    reader.cancel().catch(() => {
      // The stream may already be errored; there is nothing left to release.
    });
    reader.releaseLock();
  }
}
