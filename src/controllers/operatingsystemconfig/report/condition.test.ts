import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../../../kube/index.ts";
import { appliedState, applyingState, conditionUnchanged, failedState, findCondition, oscCondition } from "./condition.ts";
import { holdAnnotationPredicate, holdGate } from "../features/hold/gate.ts";

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
    const existing = findCondition(node);
    expect(conditionUnchanged(existing, appliedState("abc"))).toBe(true);
    expect(conditionUnchanged(existing, appliedState("abd"))).toBe(false);
  });
});

const node = (annotations: Record<string, string>): KubeObject => ({
  apiVersion: "v1",
  kind: "Node",
  metadata: { name: "n", annotations },
});

describe("holdGate", () => {
  test("should hold with the reason and what is pending", () => {
    const hold = holdGate(
      node({ "node-agent.gardener.cloud/hold": "kernel rollout paused" }),
      "0123456789abcdef",
      { filesChanged: 2, filesDeleted: 1, unitsRestarted: ["kubelet.service"] },
      600_000,
    );
    expect(hold).toEqual({
      reason: "Held",
      message:
        "Held by node-agent.gardener.cloud/hold (kernel rollout paused); pending operating system config 0123456789ab: 2 files to write, 1 to delete, restarts kubelet.service",
      requeueAfterMs: 600_000,
    });
  });

  test.each([[{}], [{ "node-agent.gardener.cloud/hold": "" }], [{ "node-agent.gardener.cloud/hold": "  " }]])(
    "should not hold for annotations %p",
    (a) => {
      expect(holdGate(node(a), "c", { filesChanged: 0, filesDeleted: 0, unitsRestarted: [] }, 1)).toBeUndefined();
    },
  );
});

describe("holdAnnotationPredicate", () => {
  test("should pass updates that set, change or remove the hold, and nothing else", () => {
    const none = node({});
    const held = node({ "node-agent.gardener.cloud/hold": "a" });
    expect(holdAnnotationPredicate.update(none, held)).toBe(true);
    expect(holdAnnotationPredicate.update(held, none)).toBe(true);
    expect(holdAnnotationPredicate.update(held, node({ "node-agent.gardener.cloud/hold": "b" }))).toBe(true);
    expect(holdAnnotationPredicate.update(held, node({ "node-agent.gardener.cloud/hold": "a", other: "x" }))).toBe(false);
    expect(holdAnnotationPredicate.create(held)).toBe(false);
    expect(holdAnnotationPredicate.delete(held)).toBe(false);
    expect(holdAnnotationPredicate.generic(held)).toBe(false);
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
