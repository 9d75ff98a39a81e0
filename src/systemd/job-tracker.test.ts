import { describe, expect, test } from "bun:test";
import { FakeClock } from "../../test/doubles/fake-clock.ts";
import { JobTracker } from "./job-tracker.ts";

describe("JobTracker", () => {
  describe("wait", () => {
    test("should resolve with the result of a JobRemoved that arrives while waiting", async () => {
      const jobs = new JobTracker(new FakeClock());
      const waiting = jobs.wait("/org/freedesktop/systemd1/job/7", 10_000);
      jobs.removed("/org/freedesktop/systemd1/job/6", "failed");
      jobs.removed("/org/freedesktop/systemd1/job/7", "done");
      expect(await waiting).toEqual({ kind: "finished", result: "done" });
    });

    test("should resolve with a result that arrived before the wait began", async () => {
      const jobs = new JobTracker(new FakeClock());
      jobs.removed("/org/freedesktop/systemd1/job/7", "dependency");
      expect(await jobs.wait("/org/freedesktop/systemd1/job/7", 10_000)).toEqual({ kind: "finished", result: "dependency" });
    });

    test("should report still-running once the timeout passed without a result", async () => {
      const clock = new FakeClock();
      const jobs = new JobTracker(clock);
      const waiting = jobs.wait("/org/freedesktop/systemd1/job/7", 10_000);
      await clock.waitForSleepers(1);
      clock.step(9_999);
      jobs.removed("/org/freedesktop/systemd1/job/8", "done");
      clock.step(1);
      expect(await waiting).toEqual({ kind: "still-running" });
    });

    test("should stop its timer when the result arrives", async () => {
      const clock = new FakeClock();
      const jobs = new JobTracker(clock);
      const waiting = jobs.wait("/org/freedesktop/systemd1/job/7", 10_000);
      jobs.removed("/org/freedesktop/systemd1/job/7", "done");
      await waiting;
      expect(clock.pending()).toBe(0);
    });

    test("should reject with the signal's reason when aborted", async () => {
      const jobs = new JobTracker(new FakeClock());
      const ac = new AbortController();
      const waiting = jobs.wait("/org/freedesktop/systemd1/job/7", 10_000, ac.signal);
      const reason = new Error("shutdown");
      ac.abort(reason);
      expect(await waiting.catch((e: unknown) => e)).toBe(reason);
    });

    test("should forget the oldest unclaimed results beyond 256", async () => {
      const clock = new FakeClock();
      const jobs = new JobTracker(clock);
      for (let i = 0; i <= 256; i++) jobs.removed(`/org/freedesktop/systemd1/job/${i}`, "done");
      const forgotten = jobs.wait("/org/freedesktop/systemd1/job/0", 10_000);
      expect(await jobs.wait("/org/freedesktop/systemd1/job/1", 10_000)).toEqual({ kind: "finished", result: "done" });
      await clock.waitForSleepers(1);
      clock.step(10_000);
      expect(await forgotten).toEqual({ kind: "still-running" });
    });
  });
});
