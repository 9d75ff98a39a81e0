import { describe, expect, test } from "bun:test";
import { CallLimit } from "./call-limit.ts";

const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
};

/** Lets every promise callback that is ready run (one turn of the event loop). */
const settled = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("CallLimit", () => {
  test("should never let more than the limit run and serve waiters in order", async () => {
    const limit = new CallLimit(2);
    const gates = [deferred(), deferred(), deferred(), deferred()];
    const started: number[] = [];
    let peak = 0;
    const runs = gates.map((g, i) =>
      limit.run(async () => {
        started.push(i);
        peak = Math.max(peak, limit.active);
        await g.promise;
        return i;
      }),
    );
    await settled();
    expect(started).toEqual([0, 1]);
    gates[1]?.resolve();
    await runs[1];
    await settled();
    expect(started).toEqual([0, 1, 2]);
    for (const g of gates) g.resolve();
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3]);
    expect(peak).toBe(2);
    expect(limit.active).toBe(0);
  });

  test("should free the slot when the call throws", async () => {
    const limit = new CallLimit(1);
    await expect(limit.run(() => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await limit.run(async () => "next")).toBe("next");
  });

  test("should take a waiter whose signal aborts out of the line without a slot", async () => {
    const limit = new CallLimit(1);
    const gate = deferred();
    const first = limit.run(() => gate.promise);
    const ac = new AbortController();
    const reason = new Error("stopping");
    const waiting = limit.run(async () => "never", ac.signal);
    ac.abort(reason);
    expect(await waiting.catch((e: unknown) => e)).toBe(reason);
    gate.resolve();
    await first;
    expect(limit.active).toBe(0);
  });

  test("should refuse a limit below one", () => {
    expect(() => new CallLimit(0)).toThrow(RangeError);
  });
});
