import { describe, expect, test } from "bun:test";
import { healthHold, slotDecisionHold } from "./holds.ts";
import type { SlotDecision } from "./slots.ts";

const t = { healthyForMs: 60_000, verifyTimeoutMs: 600_000, renewEveryMs: 30_000, staleAfterMs: 300_000, verifyPollMs: 5_000 };
const lease = "Lease kube-system/pool";

describe("slotDecisionHold", () => {
  test.each<[string, SlotDecision]>([
    ["take", { kind: "take" }],
    ["resume applying", { kind: "resume", state: "applying" }],
    ["resume verifying", { kind: "resume", state: "verifying" }],
  ])("should let the node go on when it may %s", (_name, d) => {
    expect(slotDecisionHold(d, 2, lease, t)).toBeUndefined();
  });
  test.each<[string, SlotDecision, unknown]>([
    [
      "waiting",
      { kind: "wait", behind: ["a", "b"] },
      {
        reason: "WaitingForRolloutSlot",
        message: "Waiting for one of 2 rollout slots on Lease kube-system/pool, behind a, b",
        requeueAfterMs: 30_000,
      },
    ],
    [
      "waiting behind more nodes than it names",
      { kind: "wait", behind: ["a", "b", "c", "d"] },
      {
        reason: "WaitingForRolloutSlot",
        message:
          "Waiting for one of 2 rollout slots on Lease kube-system/pool: all taken, by 4 nodes (the Lease's slot annotations name them)",
        requeueAfterMs: 30_000,
      },
    ],
    [
      "halted",
      { kind: "halted", failed: ["a", "b"] },
      {
        reason: "RolloutHalted",
        message:
          "Rollout halted: the change failed on (or stopped renewing the slot of) a, b, filling all 2 slots of Lease kube-system/pool; roll out a fixed OSC or remove their slot annotations to resume",
        requeueAfterMs: 30_000,
      },
    ],
    [
      "its own slot failed",
      { kind: "own-failed" },
      {
        reason: "RolloutHalted",
        message:
          "The change to this node failed; its slot on Lease kube-system/pool stays failed until a fixed OSC is rolled out or the slot annotation is removed",
        requeueAfterMs: 600_000,
      },
    ],
  ])("should hold the node when %s", (_name, d, want) => {
    expect(slotDecisionHold(d, 2, lease, t)).toEqual(want as never);
  });
});

describe("healthHold", () => {
  test("should release a healthy node", () => {
    expect(healthHold({ kind: "healthy" }, t)).toBeUndefined();
  });
  test("should keep verifying a pending node until its recheck", () => {
    expect(healthHold({ kind: "pending", why: "kubelet is not Ready", recheckInMs: 5_000 }, t)).toEqual({
      reason: "VerifyingRollout",
      message: "Verifying the node after the change: kubelet is not Ready",
      requeueAfterMs: 5_000,
    });
  });
  test("should halt a failed node", () => {
    expect(healthHold({ kind: "failed", why: "not healthy 600s after the change: kubelet is not Ready" }, t)).toEqual({
      reason: "RolloutHalted",
      message: "The change to this node failed: not healthy 600s after the change: kubelet is not Ready",
      requeueAfterMs: 600_000,
    });
  });
});
