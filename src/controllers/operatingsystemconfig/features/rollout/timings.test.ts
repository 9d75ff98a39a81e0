import { describe, expect, test } from "bun:test";
import { parseRolloutTimings, RolloutTimingsError } from "./timings.ts";

describe("parseRolloutTimings", () => {
  test("should override only the named timings", () => {
    expect(parseRolloutTimings("healthyFor=2s, staleAfter=10s")).toEqual({
      healthyForMs: 2_000,
      verifyTimeoutMs: 600_000,
      renewEveryMs: 30_000,
      staleAfterMs: 10_000,
      verifyPollMs: 5_000,
    });
  });
  test.each(["bogus=1s", "healthyFor", "healthyFor=0s"])("should reject %p", (text) => {
    expect(() => parseRolloutTimings(text)).toThrow(RolloutTimingsError);
  });
});
