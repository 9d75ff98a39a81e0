import { describe, expect, test } from "bun:test";
import { appliedState, applyingState, conditionUnchanged, failedState, findOscCondition, oscCondition } from "./condition.ts";

const t0 = Date.parse("2026-11-24T10:00:00Z");

describe("oscCondition", () => {
  test("should keep the transition time while the status stays the same", () => {
    const first = oscCondition(failedState("abc", "x"), t0, undefined);
    const later = oscCondition(failedState("abc", "y"), t0 + 60_000, first);
    expect(later.lastTransitionTime).toBe("2026-11-24T10:00:00Z");
    expect(later.lastHeartbeatTime).toBe("2026-11-24T10:01:00Z");
  });

  test("should move the transition time when the status changes", () => {
    const first = oscCondition(applyingState("abc"), t0, undefined);
    const done = oscCondition(appliedState("abc"), t0 + 5_000, first);
    expect(done).toEqual({
      type: "OperatingSystemConfigApplied",
      status: "True",
      reason: "Applied",
      message: "Operating system config abc is applied",
      lastHeartbeatTime: "2026-11-24T10:00:05Z",
      lastTransitionTime: "2026-11-24T10:00:05Z",
    });
  });

  test("should find the condition on a Node and tell when nothing changes", () => {
    const node = { status: { conditions: [{ type: "Ready", status: "True" }, oscCondition(appliedState("abc"), t0, undefined)] } };
    const existing = findOscCondition(node);
    expect(conditionUnchanged(existing, appliedState("abc"))).toBe(true);
    expect(conditionUnchanged(existing, appliedState("abd"))).toBe(false);
  });
});

describe("appliedState with drift", () => {
  test("should name what the last drift check found after the applied version", () => {
    expect(
      appliedState("abcdef0123456789", "1 managed path(s) drifted from the last-applied operating system config: /etc/a (mode)").message,
    ).toBe(
      `${appliedState("abcdef0123456789").message}; 1 managed path(s) drifted from the last-applied operating system config: /etc/a (mode)`,
    );
  });
});
