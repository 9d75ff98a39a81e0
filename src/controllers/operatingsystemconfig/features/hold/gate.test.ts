import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../../../../kube/index.ts";
import { heldBy, holdAnnotationPredicate } from "./gate.ts";

const node = (annotations: Record<string, string>): KubeObject => ({
  apiVersion: "v1",
  kind: "Node",
  metadata: { name: "n", annotations },
});

describe("heldBy (the hold gate's message)", () => {
  test("should hold with the reason and what is pending", () => {
    const hold = heldBy(
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
      expect(heldBy(node(a), "c", { filesChanged: 0, filesDeleted: 0, unitsRestarted: [] }, 1)).toBeUndefined();
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
