import { describe, expect, test } from "bun:test";
import { bigTextChars } from "../text/index.ts";
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

  test("should hand a line of 1 MiB or more to a BigLine as it arrives, shorter ones to parse", async () => {
    const long = "x".repeat(bigTextChars + 10);
    const chunks = ["a\n", long.slice(0, 1_000_000), long.slice(1_000_000), "\nb", "\n"];
    const taken: number[] = [];
    const out: string[] = [];
    const lines = readLines(
      streamOf(chunks),
      (l) => `short ${l}`,
      () => {
        let n = 0;
        return {
          add: (bytes) => {
            n += bytes.length;
            taken.push(bytes.length);
          },
          end: () => `big ${n}`,
        };
      },
    );
    for await (const l of lines) out.push(l);
    expect(out).toEqual(["short a", `big ${long.length}`, "short b"]);
    // The first pieces went over together once the line was big enough, the rest as it came.
    expect(taken.length).toBeGreaterThan(1);
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
