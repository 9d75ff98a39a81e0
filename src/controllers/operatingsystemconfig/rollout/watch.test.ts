import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../../../kube/types.ts";
import { slotsChangedPredicate as p } from "./watch.ts";

const lease = (annotations: Record<string, string>, holder?: string): KubeObject => ({
  metadata: { name: "pool", namespace: "kube-system", annotations },
  spec: holder === undefined ? {} : { holderIdentity: holder },
});

describe("slotsChangedPredicate", () => {
  test.each([
    ["a slot was added", {}, { "slot.node-agent.gardener.cloud/a": "x" }, true],
    ["a slot was removed", { "slot.node-agent.gardener.cloud/a": "x" }, {}, true],
    ["a slot changed", { "slot.node-agent.gardener.cloud/a": "x" }, { "slot.node-agent.gardener.cloud/a": "y" }, true],
    ["only another annotation changed", { other: "1" }, { other: "2" }, false],
    ["nothing changed", { "slot.node-agent.gardener.cloud/a": "x" }, { "slot.node-agent.gardener.cloud/a": "x" }, false],
  ])("update should pass when %s: %p", (_name, before, after, want) => {
    expect(p.update(lease(before), lease(after))).toBe(want);
  });
  test("should ignore holder changes and create, delete, generic events", () => {
    expect(p.update(lease({}, "a"), lease({}))).toBe(false);
    expect(p.create(lease({}))).toBe(false);
    expect(p.delete(lease({}))).toBe(false);
    expect(p.generic(lease({}))).toBe(false);
  });
});
