import { describe, expect, test } from "bun:test";
import type { UnitStatus } from "../../systemd/index.ts";
import { type UnitFacts, type UnitVerdict, unitVerdict } from "./verdict.ts";

const now = Date.UTC(2026, 0, 1, 12, 0, 0);
const status = (name: string, activeState: string, subState: string): UnitStatus => ({
  name,
  description: "",
  loadState: "loaded",
  activeState,
  subState,
});

/** Facts as a fake systemd would report them; every query is logged. */
function facts(opts: { changedSecondsAgo?: number; type?: string; triggeredBy?: string[] } = {}) {
  const asked: string[] = [];
  const f: UnitFacts = {
    stateChangeMs: async (u) => (asked.push(`StateChangeTimestamp ${u}`), now - (opts.changedSecondsAgo ?? 0) * 1000),
    serviceType: async (u) => (asked.push(`Type ${u}`), opts.type ?? "simple"),
    triggeredBy: async (u) => (asked.push(`TriggeredBy ${u}`), opts.triggeredBy ?? []),
  };
  return { f, asked };
}

const judge = (name: string, enabled: boolean, st: UnitStatus | undefined, f: UnitFacts) =>
  unitVerdict({ name, enabled }, st, { facts: f, nowMs: now, stuckThresholdMs: 5 * 60_000 });

const ok: UnitVerdict = { kind: "ok" };
const bad = (message: string): UnitVerdict => ({ kind: "unhealthy", message });
const progressing = (message: string): UnitVerdict => ({ kind: "progressing", message });

describe("unitVerdict", () => {
  describe("state table", () => {
    test.each([
      ["not returned, enabled", true, undefined, bad("a.service: not loaded")],
      ["not returned, disabled", false, undefined, ok],
      ["active, enabled", true, ["active", "running"], ok],
      ["active, disabled", false, ["active", "running"], bad("a.service: active but should be disabled")],
      ["failed, enabled", true, ["failed", "failed"], bad("a.service: failed")],
      ["failed, disabled", false, ["failed", "failed"], ok],
      ["activating auto-restart, enabled", true, ["activating", "auto-restart"], ok],
      ["deactivating auto-restart, disabled", false, ["deactivating", "auto-restart"], ok],
      ["inactive, disabled", false, ["inactive", "dead"], ok],
      ["inactive other substate, enabled", true, ["inactive", "exited"], bad("a.service: inactive but should be enabled")],
      ["reloading, enabled", true, ["reloading", "reload"], ok],
      ["maintenance, disabled", false, ["maintenance", "x"], ok],
    ] as const)("should judge %s", async (_what, enabled, st, want) => {
      const { f, asked } = facts();
      expect(await judge("a.service", enabled, st === undefined ? undefined : status("a.service", st[0], st[1]), f)).toEqual(want);
      expect(asked).toEqual([]);
    });
  });

  describe("activating and deactivating", () => {
    test.each([
      ["activating", "start", 90, progressing("a.service: activating for 1m30s")],
      ["deactivating", "stop-sigterm", 0, progressing("a.service: deactivating for 0s")],
      ["activating", "start", 299, progressing("a.service: activating for 4m59s")],
      ["activating", "start", 300, bad("a.service: stuck in activating for 5m0s")],
      ["deactivating", "stop", 3600, bad("a.service: stuck in deactivating for 1h0m0s")],
    ] as const)("should judge %s (%s) changed %p s ago", async (state, sub, ago, want) => {
      const { f, asked } = facts({ changedSecondsAgo: ago });
      expect(await judge("a.service", true, status("a.service", state, sub), f)).toEqual(want);
      expect(asked).toEqual(["StateChangeTimestamp a.service"]);
    });
    test("should truncate the age to whole seconds", async () => {
      const f: UnitFacts = { ...facts().f, stateChangeMs: async () => now - 61_999 };
      expect(await judge("a.service", true, status("a.service", "activating", "start"), f)).toEqual(
        progressing("a.service: activating for 1m1s"),
      );
    });
    test("should pass the timestamp error on", async () => {
      const boom = new Error("no such property");
      const f: UnitFacts = { ...facts().f, stateChangeMs: async () => Promise.reject(boom) };
      await expect(judge("a.service", true, status("a.service", "activating", "start"), f)).rejects.toBe(boom);
    });
  });

  describe("inactive (dead) and enabled", () => {
    test("should accept a oneshot service without asking for triggers", async () => {
      const { f, asked } = facts({ type: "oneshot" });
      expect(await judge("a.service", true, status("a.service", "inactive", "dead"), f)).toEqual(ok);
      expect(asked).toEqual(["Type a.service"]);
    });
    test("should accept a service started by a timer", async () => {
      const { f, asked } = facts({ triggeredBy: ["a.timer"] });
      expect(await judge("a.service", true, status("a.service", "inactive", "dead"), f)).toEqual(ok);
      expect(asked).toEqual(["Type a.service", "TriggeredBy a.service"]);
    });
    test("should report a simple service nothing triggers", async () => {
      const { f } = facts();
      expect(await judge("a.service", true, status("a.service", "inactive", "dead"), f)).toEqual(
        bad("a.service: inactive but should be enabled"),
      );
    });
    test("should not ask the service type of a unit that is not a service", async () => {
      const { f, asked } = facts({ type: "oneshot" });
      expect(await judge("a.timer", true, status("a.timer", "inactive", "dead"), f)).toEqual(
        bad("a.timer: inactive but should be enabled"),
      );
      expect(asked).toEqual(["TriggeredBy a.timer"]);
    });
    test("should accept a non-service unit that something triggers", async () => {
      const { f } = facts({ triggeredBy: ["b.path"] });
      expect(await judge("a.socket", true, status("a.socket", "inactive", "dead"), f)).toEqual(ok);
    });
  });
});
