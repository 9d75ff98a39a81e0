import { describe, expect, test } from "bun:test";
import { FakeClock } from "../../test/doubles/fake-clock.ts";
import { defaultControllerRateLimiter, ExponentialFailureRateLimiter, MaxOfRateLimiter, TokenBucket } from "./rate-limiter.ts";

describe("ExponentialFailureRateLimiter", () => {
  test("should double from 5 ms per failure and cap at 1000 s", () => {
    const l = new ExponentialFailureRateLimiter();
    const delays = Array.from({ length: 20 }, () => l.when("a"));
    expect(delays.slice(0, 5)).toEqual([5, 10, 20, 40, 80]);
    expect(delays[17]).toBe(655_360);
    expect(delays[18]).toBe(1_000_000);
    expect(delays[19]).toBe(1_000_000);
    expect(l.numRequeues("a")).toBe(20);
  });

  test("should keep separate histories per key and start over after forget", () => {
    const l = new ExponentialFailureRateLimiter();
    l.when("a");
    l.when("a");
    expect(l.when("b")).toBe(5);
    l.forget("a");
    expect(l.numRequeues("a")).toBe(0);
    expect(l.when("a")).toBe(5);
  });

  test("should honour a custom cap (systemd-unit-check caps at its syncPeriod)", () => {
    const l = new ExponentialFailureRateLimiter(5, 60_000);
    for (let i = 0; i < 30; i++) l.when("k");
    expect(l.when("k")).toBe(60_000);
  });

  test("should stay finite after thousands of failures", () => {
    const l = new ExponentialFailureRateLimiter();
    for (let i = 0; i < 5000; i++) l.when("k");
    expect(l.when("k")).toBe(1_000_000);
  });
});

describe("TokenBucket", () => {
  test("should hand out the burst at once, then one token per 1/qps", () => {
    const clock = new FakeClock();
    const b = new TokenBucket(10, 3, clock);
    expect([b.reserve(), b.reserve(), b.reserve()]).toEqual([0, 0, 0]);
    expect(b.reserve()).toBe(100);
    expect(b.reserve()).toBe(200);
    clock.step(200);
    expect(b.reserve()).toBe(100);
  });

  test("should refill up to the burst only", () => {
    const clock = new FakeClock();
    const b = new TokenBucket(10, 2, clock);
    b.reserve();
    b.reserve();
    clock.step(10_000);
    expect([b.reserve(), b.reserve(), b.reserve()]).toEqual([0, 0, 100]);
  });

  test("should not limit when qps is zero or negative", () => {
    const b = new TokenBucket(0, 0, new FakeClock());
    expect(Array.from({ length: 100 }, () => b.reserve()).every((d) => d === 0)).toBe(true);
  });

  test("should wait on the clock and give the token back when aborted", async () => {
    const clock = new FakeClock();
    const b = new TokenBucket(1, 1, clock);
    await b.wait();
    const ac = new AbortController();
    const waiting = b.wait(ac.signal);
    ac.abort(new Error("stop"));
    await expect(waiting).rejects.toThrow("stop");
    await clock.settle();
    // The aborted reservation was returned, so the next caller waits one interval, not two.
    expect(b.reserve()).toBe(1000);
  });
});

describe("defaultControllerRateLimiter", () => {
  test("should take the larger of per-key backoff and the 10 qps / burst 100 bucket", () => {
    const clock = new FakeClock();
    const l = defaultControllerRateLimiter(clock);
    expect(l.when("a")).toBe(5);
    expect(l.when("a")).toBe(10);
    for (let i = 0; i < 98; i++) l.when(`k${i}`);
    // Bucket exhausted: the 101st token is due in 100 ms, more than the per-key 5 ms.
    expect(l.when("b")).toBe(100);
  });

  test("should forget in every limiter", () => {
    const l = new MaxOfRateLimiter(new ExponentialFailureRateLimiter(), new ExponentialFailureRateLimiter(1, 10));
    l.when("a");
    l.when("a");
    expect(l.numRequeues("a")).toBe(2);
    l.forget("a");
    expect(l.numRequeues("a")).toBe(0);
  });
});
