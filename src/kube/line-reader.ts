/** Splits a stream of text chunks into lines, keeping a partial line until its end arrives. */
export class LineSplitter {
  #rest = "";

  /** Feed one chunk; returns the complete, non-blank lines it finished. */
  push(chunk: string): string[] {
    const text = this.#rest + chunk;
    const parts = text.split("\n");
    this.#rest = parts.pop() ?? "";
    return parts.map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l)).filter((l) => l.trim() !== "");
  }

  /** The stream ended: whatever is left, if not blank, is the last line. */
  end(): string[] {
    const rest = this.#rest;
    this.#rest = "";
    return rest.trim() === "" ? [] : [rest];
  }
}

/** Yields the lines of a byte stream (UTF-8, split multibyte sequences handled by the decoder). */
export async function* readLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  const splitter = new LineSplitter();
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      yield* splitter.push(decoder.decode(value, { stream: true }));
    }
    yield* splitter.push(decoder.decode());
    yield* splitter.end();
  } finally {
    // Early exit (consumer stopped, or abort): closing the reader closes the connection.
    reader.cancel().catch(() => {
      // The stream may already be errored; there is nothing left to release.
    });
    reader.releaseLock();
  }
}
