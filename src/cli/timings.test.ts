import { describe, expect, test } from "bun:test";
import { defaultAgentTimings, parseAgentTimings, TimingsError } from "./timings.ts";

describe("defaultAgentTimings", () => {
  // The one place production's clock constants are asserted: tests elsewhere run with shortened ones
  // and assert that the configured value is used, never by sleeping through the default.
  test("should be upstream's values", () => {
    expect(defaultAgentTimings).toEqual({
      rollout: { healthyForMs: 60_000, verifyTimeoutMs: 600_000, renewEveryMs: 30_000, staleAfterMs: 300_000, verifyPollMs: 5_000 },
      driftCheckPeriodMs: undefined,
      unitVerifyWindowMs: 30_000,
      unitCheckPeriodMs: undefined,
      oscBackoffMaxMs: 1_000_000,
      watchBackoffMaxMs: 30_000,
    });
  });
});

describe("parseAgentTimings", () => {
  test("should override only the named timings", () => {
    expect(parseAgentTimings("healthyFor=2s, staleAfter=10s, unitCheckPeriod=1s")).toEqual({
      rollout: { healthyForMs: 2_000, verifyTimeoutMs: 600_000, renewEveryMs: 30_000, staleAfterMs: 10_000, verifyPollMs: 5_000 },
      driftCheckPeriodMs: undefined,
      unitVerifyWindowMs: 30_000,
      unitCheckPeriodMs: 1_000,
      oscBackoffMaxMs: 1_000_000,
      watchBackoffMaxMs: 30_000,
    });
  });
  test("should take every key", () => {
    expect(
      parseAgentTimings(
        "healthyFor=1s,verifyTimeout=2s,renewEvery=3s,staleAfter=4s,verifyPoll=5s,driftCheckPeriod=6s,unitVerifyWindow=7s,unitCheckPeriod=8s,oscBackoffMax=9s,watchBackoffMax=10s",
      ),
    ).toEqual({
      rollout: { healthyForMs: 1_000, verifyTimeoutMs: 2_000, renewEveryMs: 3_000, staleAfterMs: 4_000, verifyPollMs: 5_000 },
      driftCheckPeriodMs: 6_000,
      unitVerifyWindowMs: 7_000,
      unitCheckPeriodMs: 8_000,
      oscBackoffMaxMs: 9_000,
      watchBackoffMaxMs: 10_000,
    });
  });
  test("should not change the defaults", () => {
    parseAgentTimings("healthyFor=1s,unitVerifyWindow=1s");
    expect(defaultAgentTimings.rollout.healthyForMs).toBe(60_000);
    expect(defaultAgentTimings.unitVerifyWindowMs).toBe(30_000);
  });
  test.each(["bogus=1s", "healthyFor", "healthyFor=0s"])("should reject %p", (text) => {
    expect(() => parseAgentTimings(text)).toThrow(TimingsError);
  });
});
