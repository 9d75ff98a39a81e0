import { describe, expect, test } from "bun:test";
import { findCondition, kubeTime, microTime } from "./node.ts";

const t0 = Date.UTC(2026, 0, 1, 0, 0, 0);

describe("findCondition", () => {
  const node = {
    metadata: {},
    status: {
      conditions: [
        { type: "Ready", status: "True" },
        { type: "InPlaceUpdate", status: "True", lastHeartbeatTime: null, lastTransitionTime: null, reason: "ReadyForUpdate" },
        "garbage",
        { type: "SystemdUnitsReady", status: "False", lastTransitionTime: "2025-12-31T00:00:00Z", reason: "UnhealthyUnits" },
      ],
    },
  };
  test("should find the condition of the type and skip malformed entries", () => {
    expect(findCondition(node, "SystemdUnitsReady")?.lastTransitionTime).toBe("2025-12-31T00:00:00Z");
  });
  test("should read a time the API server wrote as null as absent", () => {
    expect(findCondition(node, "InPlaceUpdate")).toEqual({ type: "InPlaceUpdate", status: "True", reason: "ReadyForUpdate" });
  });
  test.each([
    ["no status", { metadata: {} }],
    ["null conditions", { metadata: {}, status: { conditions: null } }],
    ["conditions not a list", { metadata: {}, status: { conditions: "x" } }],
  ])("should find nothing with %s", (_what, n) => {
    expect(findCondition(n, "SystemdUnitsReady")).toBeUndefined();
  });
});

describe("kubeTime", () => {
  test("should drop the milliseconds", () => expect(kubeTime(t0 + 1_999)).toBe("2026-01-01T00:00:01Z"));
});

describe("microTime", () => {
  test("should write UTC with exactly six fractional digits", () => {
    expect(microTime(Date.UTC(2026, 0, 2, 3, 4, 5, 123))).toBe("2026-01-02T03:04:05.123000Z");
    expect(microTime(Date.UTC(2026, 0, 2, 3, 4, 5, 0))).toBe("2026-01-02T03:04:05.000000Z");
  });
});
