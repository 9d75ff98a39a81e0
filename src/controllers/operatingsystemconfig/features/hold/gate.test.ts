import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../../../../kube/index.ts";
import { testGateContext } from "../../../../../test/harness/gate-context.ts";
import { emptyChanges } from "../../../../osc/index.ts";
import type { GateDisruption } from "../../gates/gate.ts";
import { heldBy, holdAnnotationPredicate, holdGate } from "./gate.ts";

const node = (annotations: Record<string, string>): KubeObject => ({
  apiVersion: "v1",
  kind: "Node",
  metadata: { name: "n", annotations },
});

const nothing = { filesChanged: 0, filesDeleted: 0, unitsRestarted: [] };
const none = { disruptive: false, text: "", units: 0 };
const holdNode = node({ "node-agent.gardener.cloud/hold": "freeze" });

describe("heldBy (the hold gate's message)", () => {
  test("should hold with the reason and what is pending", () => {
    const hold = heldBy(
      node({ "node-agent.gardener.cloud/hold": "kernel rollout paused" }),
      "0123456789abcdef",
      {
        summary: { filesChanged: 2, filesDeleted: 1, unitsRestarted: ["kubelet.service"] },
        disruption: { disruptive: true, text: "restarts kubelet.service", units: 1 },
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

  test("should name the restarts the disruption assessment leaves (a restart the policy makes a reload is none)", async () => {
    const changes = emptyChanges("c");
    changes.files.changed.push({ path: "/etc/k", content: { inline: { encoding: "", data: "x" } } });
    changes.units.commands.push({ name: "kubelet.service", command: "restart" });
    const decide = (disruption: GateDisruption) =>
      holdGate({ syncPeriodMs: 1 }).decide(
        testGateContext({ checksum: "0123456789abcdef", node: holdNode, changes: async () => changes, disruption: async () => disruption }),
      );
    const message = async (disruption: GateDisruption) => {
      const d = await decide(disruption);
      return d.kind === "hold" ? d.hold.message : d.kind;
    };
    expect(await message({ disruptive: false, text: "", units: 1 })).toBe(
      "Held by node-agent.gardener.cloud/hold (freeze); pending operating system config 0123456789ab: 1 file to write",
    );
    changes.files.changed.length = 0;
    expect(await message({ disruptive: false, text: "", units: 1 })).toEndWith(": no restart, stop or in-place step");
    expect(await message({ disruptive: true, text: "stops old.service, operating system update", units: 1 })).toEndWith(
      ": stops old.service, operating system update",
    );
    expect(await message(none)).toEndWith(": no file or unit changes");
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
