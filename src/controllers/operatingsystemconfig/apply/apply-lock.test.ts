import { describe, expect, test } from "bun:test";
import { ApplyLock, exclusively } from "./apply-lock.ts";

/** Lets every callback already queued run (no timer involved). */
const drain = () => new Promise((r) => setImmediate(r));

describe("ApplyLock", () => {
  test("should run a second holder only after the first one finished", async () => {
    const lock = new ApplyLock();
    const order: string[] = [];
    const first = Promise.withResolvers<void>();
    const a = lock.exclusive(async () => {
      order.push("a starts");
      await first.promise;
      order.push("a ends");
    });
    const b = lock.exclusive(async () => {
      order.push("b runs");
    });
    await drain();
    expect(order).toEqual(["a starts"]);
    expect(lock.busy).toBe(true);
    first.resolve();
    await Promise.all([a, b]);
    expect(order).toEqual(["a starts", "a ends", "b runs"]);
    expect(lock.busy).toBe(false);
    expect(lock.generation).toBe(2);
  });

  test("should release the lock when a holder throws", async () => {
    const lock = new ApplyLock();
    await expect(lock.exclusive(async () => Promise.reject(new Error("failed applying changed files")))).rejects.toThrow(
      "failed applying changed files",
    );
    expect(await lock.exclusive(async () => "next")).toBe("next");
    expect(lock.generation).toBe(2);
  });
});

describe("exclusively", () => {
  test("should run at once without a lock", async () => {
    expect(await exclusively(undefined, async () => 1)).toBe(1);
  });
});
