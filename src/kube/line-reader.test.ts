import { describe, expect, test } from "bun:test";
import { readLines } from "./line-reader.ts";

const streamOf = (chunks: readonly (string | Uint8Array)[]) =>
  new ReadableStream<Uint8Array>({
    start(c) {
      for (const chunk of chunks) c.enqueue(typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk);
      c.close();
    },
  });

const linesOf = async (stream: ReadableStream<Uint8Array>) => {
  const out: string[] = [];
  for await (const l of readLines(stream)) out.push(l);
  return out;
};

describe("readLines", () => {
  test.each([
    { chunks: ['{"a":1}\n{"b":2}\n'], lines: ['{"a":1}', '{"b":2}'] },
    { chunks: ['{"a"', ":1}\n{", '"b":2}\n'], lines: ['{"a":1}', '{"b":2}'] },
    { chunks: ["x\r\n", "\n", "  \n", "y"], lines: ["x", "y"] },
    { chunks: ["", "", "z"], lines: ["z"] },
    { chunks: ["a", "b", "c\nd", "e"], lines: ["abc", "de"] },
  ])("should reassemble lines split across chunks: %j", async ({ chunks, lines }) => {
    expect(await linesOf(streamOf(chunks))).toEqual([...lines]);
  });

  test("should decode UTF-8 sequences split between chunks", async () => {
    const bytes = new TextEncoder().encode('{"n":"ä€"}\n{"n":2}');
    const out = await linesOf(streamOf(Array.from(bytes, (_, i) => bytes.slice(i, i + 1))));
    expect(out).toEqual(['{"n":"ä€"}', '{"n":2}']);
  });

  test("should cancel the stream when the consumer stops early", async () => {
    let cancelled = false;
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        c.enqueue(new TextEncoder().encode("line\n"));
      },
      cancel() {
        cancelled = true;
      },
    });
    for await (const l of readLines(stream)) {
      expect(l).toBe("line");
      break;
    }
    expect(cancelled).toBe(true);
  });
});
