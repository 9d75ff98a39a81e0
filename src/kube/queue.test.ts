import { afterEach, describe, expect, test } from "bun:test";
import { FakeClock } from "../../test/doubles/fake-clock.ts";
import { ExponentialFailureRateLimiter } from "./rate-limiter.ts";
import { WorkQueue } from "./queue.ts";

let queue: WorkQueue | undefined;
const newQueue = (clock = new FakeClock()) => {
  queue = new WorkQueue(clock, new ExponentialFailureRateLimiter());
  return queue;
};
afterEach(() => queue?.shutdown());

describe("WorkQueue", () => {
  describe("add", () => {
    test("should collapse duplicates waiting in the queue", async () => {
      const q = newQueue();
      q.add("a");
      q.add("b");
      q.add("a");
      expect(q.len()).toBe(2);
      expect(await q.get()).toBe("a");
      expect(await q.get()).toBe("b");
      expect(q.len()).toBe(0);
    });

    test("should not hand out a key that is being processed, and requeue it once done", async () => {
      const q = newQueue();
      q.add("a");
      const first = await q.get();
      q.add("a");
      q.add("a");
      expect(q.len()).toBe(0);
      q.done(first ?? "");
      expect(q.len()).toBe(1);
      expect(await q.get()).toBe("a");
    });

    test("should forget a processed key that was not re-added", async () => {
      const q = newQueue();
      q.add("a");
      q.done((await q.get()) ?? "");
      expect(q.len()).toBe(0);
      expect(q.processingLen()).toBe(0);
    });
  });

  describe("get", () => {
    test("should wake a waiting getter when a key arrives", async () => {
      const q = newQueue();
      const pending = q.get();
      q.add("x");
      expect(await pending).toBe("x");
      expect(q.processingLen()).toBe(1);
    });

    test("should never give one key to two concurrent getters", async () => {
      const q = newQueue();
      const g1 = q.get();
      const g2 = q.get();
      q.add("x");
      q.add("x");
      expect(await g1).toBe("x");
      q.add("y");
      expect(await g2).toBe("y");
    });

    test("should resolve undefined when its signal aborts", async () => {
      const q = newQueue();
      const ac = new AbortController();
      const pending = q.get(ac.signal);
      ac.abort();
      expect(await pending).toBeUndefined();
      q.add("a");
      expect(q.len()).toBe(1);
    });
  });

  describe("addAfter", () => {
    test("should add the key only when the clock reaches the delay", async () => {
      const clock = new FakeClock();
      const q = newQueue(clock);
      q.addAfter("a", 100);
      clock.step(99);
      await clock.settle();
      expect(q.len()).toBe(0);
      clock.step(1);
      await clock.settle();
      expect(q.len()).toBe(1);
    });

    test("should keep the earliest deadline when the same key is delayed twice", async () => {
      const clock = new FakeClock();
      const q = newQueue(clock);
      q.addAfter("a", 1000);
      q.addAfter("a", 10);
      q.addAfter("a", 500);
      expect(q.delayedLen()).toBe(1);
      clock.step(10);
      await clock.settle();
      expect(q.len()).toBe(1);
      expect(q.delayedLen()).toBe(0);
      expect(clock.pending()).toBe(0);
    });

    test("should add at once for a zero delay", () => {
      const q = newQueue();
      q.addAfter("a", 0);
      expect(q.len()).toBe(1);
    });
  });

  describe("addRateLimited", () => {
    test("should back off 5, 10, 20 ms for consecutive failures and restart after forget", async () => {
      const clock = new FakeClock();
      const q = newQueue(clock);
      for (const expected of [5, 10, 20]) {
        q.addRateLimited("a");
        clock.step(expected - 1);
        await clock.settle();
        expect(q.len()).toBe(0);
        clock.step(1);
        await clock.settle();
        expect(q.len()).toBe(1);
        q.done((await q.get()) ?? "");
      }
      expect(q.numRequeues("a")).toBe(3);
      q.forget("a");
      q.addRateLimited("a");
      clock.step(5);
      await clock.settle();
      expect(q.len()).toBe(1);
    });
  });

  describe("shutdown", () => {
    test("should release waiting getters, ignore adds and cancel delayed keys", async () => {
      const clock = new FakeClock();
      const q = newQueue(clock);
      const pending = q.get();
      q.addAfter("late", 50);
      q.shutdown();
      expect(await pending).toBeUndefined();
      q.add("a");
      expect(q.len()).toBe(0);
      expect(await q.get()).toBeUndefined();
      await clock.settle();
      expect(clock.pending()).toBe(0);
    });
  });
});
