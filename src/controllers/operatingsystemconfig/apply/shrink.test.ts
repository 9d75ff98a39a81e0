import { describe, expect, test } from "bun:test";
import type { Logger } from "../../../log/index.ts";
import { FakeClock } from "../../../../test/doubles/fake-clock.ts";
import { HeapShrinker } from "./shrink.ts";

const setup = () => {
  const clock = new FakeClock();
  const shrunk: string[] = [];
  const log: Logger = { debug: (msg) => void shrunk.push(msg), info: () => {}, warn: () => {}, error: () => {}, child: () => log };
  return { clock, shrunk, shrinker: new HeapShrinker({ clock, log }) };
};

describe("HeapShrinker", () => {
  test("should shrink the heap once the applied version was left alone for 10 s", async () => {
    const { clock, shrunk, shrinker } = setup();
    shrinker.applied(new AbortController().signal);
    clock.step(9_999);
    await clock.settle();
    expect(shrunk).toEqual([]);
    clock.step(1);
    await clock.settle();
    expect(shrunk).toEqual(["Shrank the heap after the apply"]);
  });

  test("should drop a pending shrink when the next apply starts", async () => {
    const { clock, shrunk, shrinker } = setup();
    shrinker.applied(new AbortController().signal);
    clock.step(5_000);
    shrinker.applying();
    clock.step(10_000);
    await clock.settle();
    expect(shrunk).toEqual([]);
  });

  test("should wait the quiet time again from the latest applied version", async () => {
    const { clock, shrunk, shrinker } = setup();
    shrinker.applied(new AbortController().signal);
    clock.step(5_000);
    shrinker.applied(new AbortController().signal);
    clock.step(5_000);
    await clock.settle();
    expect(shrunk).toEqual([]);
    clock.step(5_000);
    await clock.settle();
    expect(shrunk).toEqual(["Shrank the heap after the apply"]);
  });

  test("should not shrink when the agent shuts down first", async () => {
    const { clock, shrunk, shrinker } = setup();
    const shutdown = new AbortController();
    shrinker.applied(shutdown.signal);
    shutdown.abort();
    clock.step(10_000);
    await clock.settle();
    expect(shrunk).toEqual([]);
    expect(clock.pending()).toBe(0);
  });
});
