import { describe, expect, test } from "bun:test";
import { acquiredSpec, heldByAnother, leaseSpecOf, releasedSpec, remainingMs, renewedInTime, serialLockHold } from "./lease-spec.ts";

const now = Date.parse("2026-01-01T12:00:00Z");
const at = (offsetS: number) => new Date(now + offsetS * 1000).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");

describe("serial lease maths (scenario 19)", () => {
  describe("renewedInTime", () => {
    test.each([
      ["no renewTime", { leaseDurationSeconds: 600 }, false],
      ["a negative duration", { leaseDurationSeconds: -1, renewTime: at(0) }, false],
      ["no duration and renewTime now", { renewTime: at(0) }, false],
      ["no duration and renewTime in the future", { renewTime: at(5) }, true],
      ["renewTime + duration == now", { leaseDurationSeconds: 10, renewTime: at(-10) }, false],
      ["renewTime + duration one second after now", { leaseDurationSeconds: 11, renewTime: at(-10) }, true],
      ["an expired lease", { leaseDurationSeconds: 600, renewTime: at(-700) }, false],
    ])("should be as expected for %s", (_name, spec, want) => {
      expect(renewedInTime(spec, now)).toBe(want);
    });
  });

  describe("remainingMs", () => {
    test.each([
      ["no duration", { renewTime: at(0) }, 0],
      ["a negative duration", { leaseDurationSeconds: -5, renewTime: at(0) }, 0],
      ["no renewTime", { leaseDurationSeconds: 600 }, 0],
      ["a live lease", { leaseDurationSeconds: 600, renewTime: at(-100) }, 500_000],
      ["an expired lease (negative)", { leaseDurationSeconds: 600, renewTime: at(-700) }, -100_000],
    ])("should be as expected for %s", (_name, spec, want) => {
      expect(remainingMs(spec, now)).toBe(want);
    });
  });

  describe("heldByAnother", () => {
    test.each([
      ["a free lease", {}, false],
      ["an empty holder", { holderIdentity: "", leaseDurationSeconds: 600, renewTime: at(0) }, false],
      ["our own live lease", { holderIdentity: "me", leaseDurationSeconds: 600, renewTime: at(0) }, false],
      ["another live holder", { holderIdentity: "other", leaseDurationSeconds: 600, renewTime: at(0) }, true],
      ["another expired holder", { holderIdentity: "other", leaseDurationSeconds: 600, renewTime: at(-601) }, false],
    ])("should be as expected for %s", (_name, spec, want) => {
      expect(heldByAnother(spec, "me", now)).toBe(want);
    });
  });

  describe("acquiredSpec", () => {
    test("should take a free lease with a 600 s duration and acquireTime now", () => {
      expect(acquiredSpec({}, "me", now)).toEqual({
        holderIdentity: "me",
        leaseDurationSeconds: 600,
        acquireTime: "2026-01-01T12:00:00.000000Z",
        renewTime: "2026-01-01T12:00:00.000000Z",
      });
    });
    test("should reset acquireTime when taking over from another holder", () => {
      const old = { holderIdentity: "other", leaseDurationSeconds: 30, acquireTime: at(-900), renewTime: at(-800) };
      expect(acquiredSpec(old, "me", now)).toEqual({
        holderIdentity: "me",
        leaseDurationSeconds: 600,
        acquireTime: "2026-01-01T12:00:00.000000Z",
        renewTime: "2026-01-01T12:00:00.000000Z",
      });
    });
    test("should change only renewTime when renewing as the holder", () => {
      const old = { holderIdentity: "me", leaseDurationSeconds: 30, acquireTime: at(-900), renewTime: at(-800) };
      expect(acquiredSpec(old, "me", now)).toEqual({ ...old, renewTime: "2026-01-01T12:00:00.000000Z" });
    });
  });

  describe("releasedSpec", () => {
    test("should clear all four fields when we hold the lease", () => {
      expect(releasedSpec({ holderIdentity: "me", leaseDurationSeconds: 600, acquireTime: at(0), renewTime: at(0) }, "me")).toEqual({});
    });
    test.each([
      ["held by another", { holderIdentity: "other", renewTime: at(0) }],
      ["free", {}],
    ])("should be a no-op when the lease is %s", (_name, spec) => {
      expect(releasedSpec(spec, "me")).toBeUndefined();
    });
  });

  describe("leaseSpecOf", () => {
    test("should treat a missing Lease and ill-typed fields as empty", () => {
      expect(leaseSpecOf(undefined)).toEqual({});
      expect(leaseSpecOf({ metadata: {}, spec: { holderIdentity: 3, leaseDurationSeconds: "600" } })).toEqual({});
    });
  });
});

describe("serialLockHold", () => {
  test("should wait for another live holder, naming it and when its lease ends", () => {
    expect(serialLockHold({ holderIdentity: "other", leaseDurationSeconds: 600, renewTime: at(-100) }, "me", "pool", now)).toEqual({
      reason: "WaitingForSerialLock",
      message: "Waiting for the serial reconciliation lock (Lease kube-system/pool) held by other until 2026-01-01T12:08:20Z",
      requeueAfterMs: 500_000,
    });
  });
  test("should look again after at least 1 s when the lease has no duration", () => {
    expect(serialLockHold({ holderIdentity: "other", renewTime: at(5) }, "me", "pool", now)?.requeueAfterMs).toBe(1_000);
  });
  test.each([
    ["a free lease", {}],
    ["our own lease", { holderIdentity: "me", leaseDurationSeconds: 600, renewTime: at(0) }],
    ["an expired holder", { holderIdentity: "other", leaseDurationSeconds: 600, renewTime: at(-601) }],
  ])("should let this node take %s", (_name, spec) => {
    expect(serialLockHold(spec, "me", "pool", now)).toBeUndefined();
  });
});
