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
    const withStatus = (ready: string, addresses: { type: string; address: string }[], annotations = {}): KubeObject => ({
      ...node("worker-a"),
      metadata: { ...node("worker-a").metadata, annotations },
      status: { conditions: [{ type: "Ready", status: ready }], addresses },
    });
    const ip = (address: string) => [{ type: "InternalIP", address }];
    test("should pass an update of the own node that changes its readiness or its addresses", () => {
      expect(p.update(withStatus("False", ip("10.0.0.1")), withStatus("True", ip("10.0.0.1")))).toBe(true);
      expect(p.update(withStatus("True", ip("10.0.0.1")), withStatus("True", ip("10.0.0.2")))).toBe(true);
      expect(p.update(withStatus("True", ip("10.0.0.1")), withStatus("True", []))).toBe(true);
      expect(p.update(withStatus("True", []), withStatus("True", [{ type: "ExternalIP", address: "1.2.3.4" }]))).toBe(true);
    });
    test("should drop an update that changes nothing the checkers read (the agent's own labels, annotations, conditions)", () => {
      const before = withStatus("True", ip("10.0.0.1"));
      const after = withStatus("True", ip("10.0.0.1"), { "checksum/cloud-config-data": "x" });
      (after.status as { conditions: unknown[] }).conditions.push({ type: "OperatingSystemConfigApplied", status: "True" });
      expect(p.update(before, after)).toBe(false);
    });
    test("should drop updates of other nodes", () => {
      expect(p.update(withStatus("False", []), { ...withStatus("True", ip("10.0.0.1")), metadata: node("worker-b").metadata })).toBe(false);
    });
  });
  describe("delete", () => {
    test("should pass the own node", () => expect(p.delete(node("worker-a"))).toBe(true));
  });
  describe("generic", () => {
    test("should pass the own node", () => expect(p.generic(node("worker-a"))).toBe(true));
  });
});
