import { describe, expect, test } from "bun:test";
import { LabelPatch } from "./label-patch.ts";

/** Whether `p` has settled by the time already-queued callbacks ran. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  p.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((r) => setImmediate(r));
  return done;
}

describe("LabelPatch", () => {
  describe("start", () => {
    test("should start the patch at once and keep done() pending until the patch answers", async () => {
      const answer = Promise.withResolvers<void>();
      let started = false;
      const patch = LabelPatch.start(() => {
        started = true;
        return answer.promise;
      });
      expect(started).toBe(true);
      const done = patch.done();
      expect(await settled(done)).toBe(false);
      answer.resolve();
      await done;
    });

    test("should hold a failure that nobody awaited yet without an unhandled rejection", async () => {
      const answer = Promise.withResolvers<void>();
      const patch = LabelPatch.start(() => answer.promise);
      answer.reject(new Error("node patch refused"));
      await new Promise((r) => setImmediate(r)); // an unhandled rejection would fail the test here
      await expect(patch.done()).rejects.toThrow("node patch refused");
    });
  });

  describe("isItsFailure", () => {
    test("should be true only for the patch's own error", async () => {
      const refused = new Error("node patch refused");
      const patch = LabelPatch.start(() => Promise.reject(refused));
      expect(await patch.isItsFailure(refused)).toBe(true);
      expect(await patch.isItsFailure(new Error("node patch refused"))).toBe(false);
    });

    test("should be false when the patch succeeded", async () => {
      const patch = LabelPatch.start(async () => undefined);
      expect(await patch.isItsFailure(new Error("failed applying changed files"))).toBe(false);
    });

    test("should wait for a patch still running before it answers", async () => {
      const answer = Promise.withResolvers<void>();
      const patch = LabelPatch.start(() => answer.promise);
      const verdict = patch.isItsFailure(new Error("x"));
      expect(await settled(verdict)).toBe(false);
      answer.resolve();
      expect(await verdict).toBe(false);
    });
  });

  describe("none", () => {
    test("should be done at once", async () => {
      expect(await settled(LabelPatch.none.done())).toBe(true);
      expect(await LabelPatch.none.isItsFailure(new Error("x"))).toBe(false);
    });
  });
});
