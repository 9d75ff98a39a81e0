import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../../../../kube/index.ts";
import { heldBy, holdAnnotationPredicate } from "./gate.ts";

const node = (annotations: Record<string, string>): KubeObject => ({
  apiVersion: "v1",
  kind: "Node",
  metadata: { name: "n", annotations },
});

const nothing = { filesChanged: 0, filesDeleted: 0, unitsRestarted: [] };
const none = { disruptive: false, units: [], inPlace: [] };
const holdNode = node({ "node-agent.gardener.cloud/hold": "freeze" });

describe("heldBy (the hold gate's message)", () => {
  test("should hold with the reason and what is pending", () => {
    const hold = heldBy(
      node({ "node-agent.gardener.cloud/hold": "kernel rollout paused" }),
      "0123456789abcdef",
      {
        summary: { filesChanged: 2, filesDeleted: 1, unitsRestarted: ["kubelet.service"] },
        disruption: { disruptive: true, units: [{ unit: "kubelet.service", action: "restart", why: "unit changed" }], inPlace: [] },
      },
      600_000,
    );
    expect(hold).toEqual({
      reason: "Held",
      message:
        "Held by node-agent.gardener.cloud/hold (kernel rollout paused); pending operating system config 0123456789ab: 2 files to write, 1 to delete, restarts kubelet.service",
      requeueAfterMs: 600_000,
    });
  });

  test("should describe the disruption as the disruption policy leaves it: a restart made a reload is none, stops and in-place steps are", () => {
    const reloaded = heldBy(
      holdNode,
      "c",
      {
        summary: { ...nothing, unitsRestarted: ["kubelet.service"] },
        disruption: { disruptive: false, units: [{ unit: "kubelet.service", action: "reload", why: "unit changed" }], inPlace: [] },
      },
      1,
    );
    expect(reloaded?.message).toEndWith(": no restart, stop or in-place step");
    const stopped = heldBy(
      holdNode,
      "c",
      {
        summary: { ...nothing, filesChanged: 1 },
        disruption: {
          disruptive: true,
          units: [{ unit: "old.service", action: "stop", why: "unit removed" }],
          inPlace: ["operating system update"],
        },
      },
      1,
    );
    expect(stopped?.message).toEndWith(": 1 file to write, stops old.service, operating system update");
    expect(heldBy(holdNode, "c", { summary: nothing, disruption: none }, 1)?.message).toEndWith(": no file or unit changes");
  });

  test.each([[{}], [{ "node-agent.gardener.cloud/hold": "" }], [{ "node-agent.gardener.cloud/hold": "  " }]])(
    "should not hold for annotations %p",
    (a) => {
      expect(heldBy(node(a), "c", { summary: nothing, disruption: none }, 1)).toBeUndefined();
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
