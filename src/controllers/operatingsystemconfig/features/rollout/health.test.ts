import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../../../../kube/index.ts";
import { unitsChecked, verifyHealth } from "./health.ts";
import { defaultRolloutTimings as t } from "./timings.ts";

const changed = Date.parse("2026-01-01T12:00:00Z");
const at = (s: number) => new Date(changed + s * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
const node = (ready: [string, number] | undefined, units: [string, number, number] | undefined): KubeObject => ({
  metadata: { name: "n" },
  status: {
    conditions: [
      ...(ready ? [{ type: "Ready", status: ready[0], lastTransitionTime: at(ready[1]) }] : []),
      ...(units
        ? [
            {
              type: "SystemdUnitsReady",
              status: units[0],
              lastTransitionTime: at(units[1]),
              lastHeartbeatTime: at(units[2]),
              message: "unit x failed",
            },
          ]
        : []),
    ],
  },
});

describe("verifyHealth (issue 16)", () => {
  test.each<[string, KubeObject, number, "healthy" | "pending" | "failed"]>([
    ["healthy since the change for 60 s", node(["True", -600], ["True", -600, 30]), 60, "healthy"],
    ["healthy for only 59 s", node(["True", -600], ["True", -600, 30]), 59, "pending"],
    ["Ready flipped True 10 s after the change: counted from then", node(["True", 10], ["True", -600, 30]), 65, "pending"],
    ["Ready flipped True 10 s after the change, 70 s later", node(["True", 10], ["True", -600, 30]), 70, "healthy"],
    ["not Ready", node(["False", 5], ["True", -600, 30]), 120, "pending"],
    ["no unit check since the change", node(["True", -600], ["True", -600, -5]), 120, "pending"],
    ["no SystemdUnitsReady condition", node(["True", -600], undefined), 120, "pending"],
    ["units not ready", node(["True", -600], ["False", 20, 30]), 120, "pending"],
    ["not healthy 10 min after the change", node(["True", -600], ["False", 20, 590]), 600, "failed"],
    ["healthy only briefly at 10 min", node(["True", -600], ["True", 580, 590]), 600, "failed"],
  ])("%s", (_name, n, nowS, want) => {
    expect(verifyHealth(n, changed, changed, changed + nowS * 1000, t).kind).toBe(want);
  });

  test.each<[string, KubeObject, number, "healthy" | "pending" | "failed"]>([
    ["Ready for 60 s, no SystemdUnitsReady condition", node(["True", -600], undefined), 60, "healthy"],
    ["Ready flipped True 10 s after the change, 65 s later", node(["True", 10], undefined), 65, "pending"],
    ["not Ready 10 min after the change", node(["False", 5], undefined), 600, "failed"],
  ])("an OSC without units (no unit check to wait for): %s", (_name, n, nowS, want) => {
    expect(verifyHealth(n, changed, changed, changed + nowS * 1000, t, false).kind).toBe(want);
  });

  test("should wait for the unit check only when the OSC has units", () => {
    const unit = { name: "a.service" };
    expect(unitsChecked({ spec: { units: [unit] } } as never)).toBe(true);
    expect(unitsChecked({ spec: {}, status: { extensionUnits: [unit] } } as never)).toBe(true);
    expect(unitsChecked({ spec: { units: [] }, status: {} } as never)).toBe(false);
  });

  test("should say why it waits and when to look again", () => {
    expect(verifyHealth(node(["True", -600], ["False", 20, 30]), changed, changed, changed + 40_000, t)).toEqual({
      kind: "pending",
      why: "systemd units are not ready: unit x failed",
      recheckInMs: 5_000,
    });
    expect(verifyHealth(node(["True", -600], ["True", -600, 30]), changed, changed, changed + 58_000, t)).toEqual({
      kind: "pending",
      why: "healthy for 58s of 60s",
      recheckInMs: 2_000,
    });
    // Healthy so far: the next look is when the window ends, not every verifyPoll.
    expect(verifyHealth(node(["True", -600], ["True", -600, 30]), changed, changed, changed + 40_000, t)).toMatchObject({
      why: "healthy for 40s of 60s",
      recheckInMs: 20_000,
    });
  });
});
