import { describe, expect, test } from "bun:test";
import { systemdUnitsCondition } from "./condition.ts";

const t0 = Date.UTC(2026, 0, 1, 0, 0, 0);
const now = t0 + 90_500;

describe("systemdUnitsCondition", () => {
  test("should report all units healthy when nothing is wrong", () => {
    expect(systemdUnitsCondition([{ kind: "ok" }], now, undefined)).toEqual({
      type: "SystemdUnitsReady",
      status: "True",
      lastHeartbeatTime: "2026-01-01T00:01:30Z",
      lastTransitionTime: "2026-01-01T00:01:30Z",
      reason: "AllUnitsHealthy",
      message: "All systemd units from the operating system config are running as expected.",
    });
  });
  test("should let unhealthy units win over progressing ones and join messages in order", () => {
    const c = systemdUnitsCondition(
      [
        { kind: "unhealthy", message: "a.service: failed" },
        { kind: "progressing", message: "b.service: activating for 3s" },
        { kind: "unhealthy", message: "c.service: not loaded" },
      ],
      now,
      undefined,
    );
    expect([c.status, c.reason, c.message]).toEqual(["False", "UnhealthyUnits", "a.service: failed; c.service: not loaded"]);
  });
  test("should report progressing units with status True", () => {
    const c = systemdUnitsCondition(
      [
        { kind: "progressing", message: "a.service: activating for 3s" },
        { kind: "progressing", message: "b.service: deactivating for 1m0s" },
      ],
      now,
      undefined,
    );
    expect([c.status, c.reason, c.message]).toEqual([
      "True",
      "ProgressingUnits",
      "a.service: activating for 3s; b.service: deactivating for 1m0s",
    ]);
  });
  test("should keep lastTransitionTime while the status is unchanged", () => {
    const existing = { type: "SystemdUnitsReady", status: "True", lastTransitionTime: "2025-12-31T00:00:00Z" };
    const c = systemdUnitsCondition([{ kind: "progressing", message: "a.service: activating for 3s" }], now, existing);
    expect(c.lastTransitionTime).toBe("2025-12-31T00:00:00Z");
    expect(c.lastHeartbeatTime).toBe("2026-01-01T00:01:30Z");
  });
  test("should set lastTransitionTime to now when the status changes", () => {
    const existing = { type: "SystemdUnitsReady", status: "False", lastTransitionTime: "2025-12-31T00:00:00Z" };
    expect(systemdUnitsCondition([{ kind: "ok" }], now, existing).lastTransitionTime).toBe("2026-01-01T00:01:30Z");
  });
});
