import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../../kube/index.ts";
import { leasePredicate, reconcileTimeoutMs, renewIntervalMs, requestTimeoutMs, retryBackoffCapMs } from "./watch.ts";

const own: KubeObject = { metadata: { name: "node-a", labels: { "kubernetes.io/hostname": "worker-a" } } };
const other: KubeObject = { metadata: { name: "node-b", labels: { "kubernetes.io/hostname": "worker-b" } } };

describe("leasePredicate", () => {
  const p = leasePredicate("worker-a");
  describe("create", () => {
    test("should pass the own node", () => expect(p.create(own)).toBe(true));
    test("should drop another host's node", () => expect(p.create(other)).toBe(false));
  });
  describe("update", () => {
    test("should never pass, not even for the own node", () => expect(p.update(own, own)).toBe(false));
  });
  describe("delete", () => {
    test("should never pass", () => expect(p.delete(own)).toBe(false));
  });
  describe("generic", () => {
    test("should never pass", () => expect(p.generic(own)).toBe(false));
  });
});

describe("timings", () => {
  test("should renew every 10 s and time out after 40 s for a 40 s lease", () => {
    expect(renewIntervalMs(40)).toBe(10_000);
    expect(reconcileTimeoutMs(40)).toBe(40_000);
  });
  test("should give up one request after 5 s and back off by at most 2.5 s for a 40 s lease", () => {
    expect(requestTimeoutMs(40)).toBe(5_000);
    expect(retryBackoffCapMs(40)).toBe(2_500);
  });
});
