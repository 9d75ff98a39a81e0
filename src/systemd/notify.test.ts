import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import type { Clock } from "../clock/index.ts";
import { createNotifier, nopNotifier, runWatchdog, watchdogIntervalMs } from "./notify.ts";
import type { Notifier } from "./notify.ts";

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length > 0) cleanups.pop()?.();
});

/** A real datagram receiver (socat) on `address`, collecting what arrives. */
const receiver = (address: string) => {
  const proc: Subprocess<"ignore", "pipe", "pipe"> = Bun.spawn(["socat", "-u", address, "STDOUT"], { stdout: "pipe", stderr: "pipe" });
  cleanups.push(() => proc.kill());
  let text = "";
  const reader = proc.stdout.getReader();
  const pump = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      text += new TextDecoder().decode(value);
    }
  })();
  return { received: () => text, pump };
};

const until = async (what: string, ok: () => boolean, timeoutMs = 5000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
};

const track = (n: Notifier): Notifier => {
  cleanups.push(() => n.close());
  return n;
};

describe("createNotifier", () => {
  test("should deliver READY=1, WATCHDOG=1 and STOPPING=1 to a unix datagram socket", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gna-notify-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const sock = join(dir, "notify.sock");
    const r = receiver(`UNIX-RECV:${sock}`);
    await until("the socket to be bound", () => existsSync(sock));
    const notifier = track(await createNotifier(sock));
    expect(notifier.ready()).toBe(true);
    expect(notifier.watchdog()).toBe(true);
    expect(notifier.stopping()).toBe(true);
    await until("three datagrams", () => r.received().includes("STOPPING=1"));
    expect(r.received()).toBe("READY=1WATCHDOG=1STOPPING=1");
  });

  test("should deliver to an abstract socket given as @name", async () => {
    const name = `gna-notify-test-${process.pid}-${Date.now()}`;
    const r = receiver(`ABSTRACT-RECV:${name}`);
    const notifier = track(await createNotifier(`@${name}`));
    await until("the datagram", () => {
      notifier.ready();
      return r.received().includes("READY=1");
    });
    expect(r.received().startsWith("READY=1")).toBe(true);
  });

  test.each([undefined, "", "relative/path"])("should return the no-op notifier for %p", async (value) => {
    expect(await createNotifier(value)).toBe(nopNotifier);
  });

  test("should report a failed send when nobody listens", async () => {
    const notifier = track(await createNotifier("/nonexistent/notify.sock"));
    expect(notifier.ready()).toBe(false);
  });
});

describe("watchdogIntervalMs", () => {
  test.each<[string | undefined, number | undefined]>([
    ["30000000", 15_000],
    ["1000", 0.5],
    ["0", undefined],
    ["", undefined],
    ["abc", undefined],
    [undefined, undefined],
  ])("should turn WATCHDOG_USEC=%p into %p ms", (value, ms) => {
    expect(watchdogIntervalMs(value)).toBe(ms);
  });
});

describe("runWatchdog", () => {
  test("should ping once per interval until aborted", async () => {
    const controller = new AbortController();
    const sleeps: number[] = [];
    let pings = 0;
    const clock: Clock = {
      now: () => 0,
      sleep: async (ms) => {
        sleeps.push(ms);
        if (sleeps.length === 3) controller.abort();
      },
    };
    const notifier: Notifier = { ...nopNotifier, watchdog: () => ++pings > 0 };
    await runWatchdog(notifier, 15_000, clock, controller.signal);
    expect(pings).toBe(3);
    expect(sleeps).toEqual([15_000, 15_000, 15_000]);
  });
});
