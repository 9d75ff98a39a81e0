import { describe, expect, test } from "bun:test";
import { LineSplitter, readLines } from "./line-reader.ts";

describe("LineSplitter", () => {
  test.each([
    { chunks: ['{"a":1}\n{"b":2}\n'], lines: ['{"a":1}', '{"b":2}'] },
    { chunks: ['{"a"', ":1}\n{", '"b":2}\n'], lines: ['{"a":1}', '{"b":2}'] },
    { chunks: ["x\r\n", "\n", "  \n", "y"], lines: ["x", "y"] },
    { chunks: ["", "", "z"], lines: ["z"] },
  ])("should reassemble lines split across chunks: %j", ({ chunks, lines }) => {
    const s = new LineSplitter();
    const out = chunks.flatMap((c) => s.push(c));
    out.push(...s.end());
    expect(out).toEqual([...lines]);
  });
});

describe("readLines", () => {
  test("should decode UTF-8 sequences split between chunks", async () => {
    const bytes = new TextEncoder().encode('{"n":"ä€"}\n{"n":2}');
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < bytes.length; i++) c.enqueue(bytes.slice(i, i + 1));
        c.close();
      },
    });
    const out: string[] = [];
    for await (const l of readLines(stream)) out.push(l);
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
