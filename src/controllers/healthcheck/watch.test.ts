import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../../kube/index.ts";
import { healthCheckPredicate } from "./watch.ts";

const node = (host: string): KubeObject => ({ metadata: { name: "node-a", labels: { "kubernetes.io/hostname": host } } });

describe("healthCheckPredicate", () => {
  const p = healthCheckPredicate("worker-a");
  describe("create", () => {
    test("should pass the own node and drop others", () => {
      expect(p.create(node("worker-a"))).toBe(true);
      expect(p.create(node("worker-b"))).toBe(false);
    });
  });
  describe("update", () => {
    test("should pass every update of the own node, so status changes run the checks", () => {
      expect(p.update(node("worker-a"), node("worker-a"))).toBe(true);
      expect(p.update(node("worker-a"), node("worker-b"))).toBe(false);
    });
  });
  describe("delete", () => {
    test("should pass the own node", () => expect(p.delete(node("worker-a"))).toBe(true));
  });
  describe("generic", () => {
    test("should pass the own node", () => expect(p.generic(node("worker-a"))).toBe(true));
  });
});
