import { afterEach, describe, expect, test } from "bun:test";
import { setupHostnameCheckController } from "../../src/controllers/hostnamecheck/index.ts";
import type { Logger } from "../../src/log/types.ts";
import { FakeClock } from "../doubles/fake-clock.ts";

const log: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => log };

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A running hostname-check controller that started as `worker-a`; `os.name` is what the OS reports now. */
function agent() {
  const clock = new FakeClock();
  const os: { name: string; fail: boolean; reads: number } = { name: "Worker-A", fail: false, reads: 0 };
  const restarts: string[] = [];
  const controller = setupHostnameCheckController({
    hostName: "worker-a",
    readHostname: () => {
      os.reads++;
      if (os.fail) throw new Error("uname failed");
      return os.name;
    },
    clock,
    log,
    onRestartRequested: (why) => restarts.push(why),
  });
  const stop = new AbortController();
  let finished = false;
  const running = controller.start(stop.signal).then(() => {
    finished = true;
  });
  cleanups.push(async () => {
    stop.abort();
    await running;
  });
  return { clock, os, restarts, controller, finished: () => finished };
}

describe("hostname-check controller", () => {
  test("reads the hostname at start and again every 30 s while it is unchanged", async () => {
    const a = agent();
    await a.clock.waitForSleepers(1);
    expect(a.os.reads).toBe(1);
    expect(a.clock.nextDeadline()).toBe(a.clock.now() + 30_000);

    a.clock.step(29_999);
    await a.clock.settle();
    expect(a.os.reads).toBe(1);
    a.clock.step(1);
    await a.clock.waitForSleepers(1);
    expect(a.os.reads).toBe(2);
    expect(a.restarts).toEqual([]);
  });

  test("treats a hostname that differs only in case as unchanged", async () => {
    const a = agent();
    await a.clock.waitForSleepers(1);
    a.os.name = "WORKER-A";
    a.clock.step(30_000);
    await a.clock.waitForSleepers(1);
    expect(a.os.reads).toBe(2);
    expect(a.restarts).toEqual([]);
  });

  test("requests a restart once when the hostname changed and stops checking", async () => {
    const a = agent();
    await a.clock.waitForSleepers(1);
    a.os.name = "Worker-B";
    a.clock.step(30_000);
    for (let i = 0; i < 100 && !a.finished(); i++) await a.clock.settle();
    expect(a.restarts).toEqual(["hostname changed from worker-a to worker-b"]);
    expect(a.finished()).toBe(true);
    expect(a.clock.pending()).toBe(0);
  });

  test("retries a failed hostname read with backoff instead of restarting", async () => {
    const a = agent();
    await a.clock.waitForSleepers(1);
    a.os.fail = true;
    a.clock.step(30_000);
    // The failed attempt is re-added after the rate limiter's first delay (5 ms).
    await a.clock.waitForSleepers(1);
    expect(a.os.reads).toBe(2);
    expect(a.clock.nextDeadline()).toBe(a.clock.now() + 5);
    a.os.fail = false;
    a.clock.step(5);
    await a.clock.waitForSleepers(1);
    expect(a.os.reads).toBe(3);
    expect(a.clock.nextDeadline()).toBe(a.clock.now() + 30_000);
    expect(a.restarts).toEqual([]);
  });
});
