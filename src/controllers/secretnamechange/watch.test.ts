import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../../kube/index.ts";
import { secretNameLabelPredicate } from "./watch.ts";

const node = (label?: string): KubeObject => ({
  metadata: {
    name: "node-a",
    labels: label === undefined ? {} : { "worker.gardener.cloud/gardener-node-agent-secret-name": label },
  },
});

describe("secretNameLabelPredicate", () => {
  const p = secretNameLabelPredicate;
  describe("create", () => {
    test("should pass when the label is set", () => expect(p.create(node("osc-a"))).toBe(true));
    test("should drop when the label is empty", () => expect(p.create(node(""))).toBe(false));
    test("should drop when the label is absent", () => expect(p.create(node())).toBe(false));
  });
  describe("update", () => {
    test.each([
      ["set", undefined, "osc-a", true],
      ["changed", "osc-a", "osc-b", true],
      ["removed", "osc-a", undefined, true],
      ["unchanged", "osc-a", "osc-a", false],
      ["absent on both", undefined, undefined, false],
    ] as const)("should pass only a changed value when the label is %s", (_what, before, after, want) => {
      expect(p.update(node(before), node(after))).toBe(want);
    });
  });
  describe("delete and generic", () => {
    test("should never pass", () => {
      expect(p.delete(node("osc-a"))).toBe(false);
      expect(p.generic(node("osc-a"))).toBe(false);
    });
  });
});
