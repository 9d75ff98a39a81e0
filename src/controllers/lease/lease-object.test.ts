import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../../kube/index.ts";
import { desiredLease, withControllerRef } from "./lease-object.ts";

const node: KubeObject = { metadata: { name: "node-a", uid: "uid-2" } };
const nodeRef = { apiVersion: "v1", kind: "Node", name: "node-a", uid: "uid-2", controller: true, blockOwnerDeletion: true };

describe("withControllerRef", () => {
  test("should add the Node as controller owner", () => {
    expect(withControllerRef([], node, "l")).toEqual({ refs: [nodeRef] });
  });
  test("should replace the UID of a re-created Node (match by group, kind and name)", () => {
    const old = { ...nodeRef, uid: "uid-1" };
    expect(withControllerRef([old], node, "l")).toEqual({ refs: [nodeRef] });
  });
  test("should keep unrelated non-controller owners", () => {
    const other = { apiVersion: "v1", kind: "ConfigMap", name: "x", uid: "u" };
    expect(withControllerRef([other], node, "l")).toEqual({ refs: [other, nodeRef] });
  });
  test("should leave a different controller owner in place and report it", () => {
    const other = { apiVersion: "apps/v1", kind: "Deployment", name: "x", uid: "u", controller: true };
    const r = withControllerRef([other], node, "gardener-node-agent-node-a");
    expect(r.refs).toEqual([other]);
    expect(r.error?.message).toBe("Object kube-system/gardener-node-agent-node-a is already owned by another Deployment controller x");
  });
});

describe("desiredLease", () => {
  const nowMs = Date.UTC(2026, 0, 2, 3, 4, 5, 123);
  test("should build the exact shape of a new Lease", () => {
    const { lease, ownerError } = desiredLease({ existing: undefined, node, namespace: "kube-system", leaseDurationSeconds: 40, nowMs });
    expect(ownerError).toBeUndefined();
    expect(lease).toEqual({
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: "gardener-node-agent-node-a", namespace: "kube-system", ownerReferences: [nodeRef] },
      spec: { holderIdentity: "gardener-node-agent-node-a", leaseDurationSeconds: 40, renewTime: "2026-01-02T03:04:05.123000Z" },
    });
  });
  test("should replace the spec completely and keep metadata of an existing Lease", () => {
    const existing: KubeObject = {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: "gardener-node-agent-node-a", namespace: "kube-system", resourceVersion: "7", labels: { a: "b" } },
      spec: { holderIdentity: "someone", acquireTime: "2026-01-01T00:00:00.000000Z", leaseTransitions: 3, leaseDurationSeconds: 15 },
    };
    const { lease } = desiredLease({ existing, node, namespace: "kube-system", leaseDurationSeconds: 40, nowMs });
    expect(lease["spec"]).toEqual({
      holderIdentity: "gardener-node-agent-node-a",
      leaseDurationSeconds: 40,
      renewTime: "2026-01-02T03:04:05.123000Z",
    });
    expect(lease.metadata).toEqual({ ...existing.metadata, ownerReferences: [nodeRef] });
  });
});
