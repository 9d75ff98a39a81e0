import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../../../../kube/index.ts";
import { formatSlot, type Slot } from "./slots.ts";
import { slotsChangedPredicate as p } from "./watch.ts";

const lease = (annotations: Record<string, string>, holder?: string): KubeObject => ({
  metadata: { name: "pool", namespace: "kube-system", annotations },
  spec: holder === undefined ? {} : { holderIdentity: holder },
});
const slot = (state: Slot["state"], renewed = "2026-01-01T12:00:00.000Z", checksum = "c"): string =>
  formatSlot({ checksum, since: "2026-01-01T12:00:00.000Z", renewed, state });
const k = "slot.node-agent.gardener.cloud/a";

describe("slotsChangedPredicate", () => {
  test.each([
    ["a slot was added", {}, { [k]: slot("waiting") }, true],
    ["a slot was removed (released)", { [k]: slot("verifying") }, {}, true],
    ["a slot changed state", { [k]: slot("applying") }, { [k]: slot("verifying") }, true],
    ["a slot moved to another checksum", { [k]: slot("failed") }, { [k]: slot("failed", undefined, "d") }, true],
    ["a slot was only renewed", { [k]: slot("applying") }, { [k]: slot("applying", "2026-01-01T12:00:30.000Z") }, false],
    ["only another annotation changed", { other: "1" }, { other: "2" }, false],
    ["nothing changed", { [k]: slot("waiting") }, { [k]: slot("waiting") }, false],
  ])("update should pass when %s", (_name, before, after, want) => {
    expect(p.update(lease(before), lease(after))).toBe(want);
  });
  test("should ignore holder changes and create, delete, generic events", () => {
    expect(p.update(lease({}, "a"), lease({}))).toBe(false);
    expect(p.create(lease({}))).toBe(false);
    expect(p.delete(lease({}))).toBe(false);
    expect(p.generic(lease({}))).toBe(false);
  });
});
