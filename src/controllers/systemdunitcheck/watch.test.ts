import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../../kube/index.ts";
import { systemdUnitCheckPredicate } from "./watch.ts";

const node = (host: string): KubeObject => ({ metadata: { name: "node-a", labels: { "kubernetes.io/hostname": host } } });

describe("systemdUnitCheckPredicate", () => {
  const p = systemdUnitCheckPredicate("worker-a");
  describe("create", () => {
    test("should pass the own node", () => expect(p.create(node("worker-a"))).toBe(true));
    test("should drop another host's node", () => expect(p.create(node("worker-b"))).toBe(false));
  });
  describe("update", () => {
    test("should never pass, so the own condition patches do not wake the controller", () => {
      expect(p.update(node("worker-a"), node("worker-a"))).toBe(false);
    });
  });
  describe("delete", () => {
    test("should never pass", () => expect(p.delete(node("worker-a"))).toBe(false));
  });
  describe("generic", () => {
    test("should never pass", () => expect(p.generic(node("worker-a"))).toBe(false));
  });
});
