import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../../../../kube/index.ts";
import { drainGate, inPlaceNodePredicate, nodeToSecret } from "./drain-gate.ts";
import { noInPlaceFlags } from "./flags.ts";

const node = (o: { reason?: string; result?: string; secret?: string } = {}): KubeObject => ({
  apiVersion: "v1",
  kind: "Node",
  metadata: {
    name: "n",
    labels: {
      ...(o.result !== undefined ? { "node.machine.sapcloud.io/update-result": o.result } : {}),
      ...(o.secret !== undefined ? { "worker.gardener.cloud/gardener-node-agent-secret-name": o.secret } : {}),
    },
  },
  status: { conditions: o.reason === undefined ? [] : [{ type: "InPlaceUpdate", status: "True", reason: o.reason }] },
});
const osFlag = () => ({ ...noInPlaceFlags(), operatingSystem: true });

describe("drainGate", () => {
  test("should not hold without in-place work", () => {
    expect(drainGate(noInPlaceFlags(), node())).toBeUndefined();
  });

  test("should hold in-place work until the node is ready for the update", () => {
    expect(drainGate(osFlag(), node())).toEqual({
      reason: "WaitingForDrain",
      message:
        "In-place update pending (operating system update): waiting for the Node condition InPlaceUpdate with reason ReadyForUpdate (node drained by machine-controller-manager)",
      requeueAfterMs: 60_000,
    });
  });

  test.each([
    ["another reason of the condition", node({ reason: "SelectedForUpdate" })],
    ["an unknown node", undefined],
    ["a successful earlier update", node({ result: "successful" })],
  ])("should hold with %s", (_name, n) => {
    expect(drainGate(osFlag(), n)?.reason).toBe("WaitingForDrain");
  });

  test.each([
    ["condition ReadyForUpdate", node({ reason: "ReadyForUpdate" })],
    ["label update-result=failed (automatic retry)", node({ result: "failed" })],
  ])("should open with %s", (_name, n) => {
    expect(drainGate(osFlag(), n)).toBeUndefined();
  });

  test("should name every kind of pending work", () => {
    const f = noInPlaceFlags();
    f.kubelet.cpuManagerPolicy = true;
    f.certificateAuthoritiesRotation = { kubelet: true, nodeAgent: true };
    f.serviceAccountKeyRotation = true;
    expect(drainGate(f, node())?.message).toStartWith(
      "In-place update pending (kubelet update, certificate authority rotation, service account key rotation)",
    );
  });
});

describe("inPlaceNodePredicate", () => {
  describe("create", () => {
    test("should pass a node that is ready for the update", () =>
      expect(inPlaceNodePredicate.create(node({ reason: "ReadyForUpdate" }))).toBe(true));
    test("should drop a node without the condition", () => expect(inPlaceNodePredicate.create(node())).toBe(false));
  });
  describe("update", () => {
    test("should pass the transition to ready", () =>
      expect(inPlaceNodePredicate.update(node(), node({ reason: "ReadyForUpdate" }))).toBe(true));
    test("should drop a node that stays ready", () =>
      expect(inPlaceNodePredicate.update(node({ reason: "ReadyForUpdate" }), node({ reason: "ReadyForUpdate", result: "x" }))).toBe(false));
    test("should drop other changes", () => expect(inPlaceNodePredicate.update(node(), node({ result: "failed" }))).toBe(false));
  });
  test("should drop delete and generic", () => {
    expect(inPlaceNodePredicate.delete(node({ reason: "ReadyForUpdate" }))).toBe(false);
    expect(inPlaceNodePredicate.generic(node({ reason: "ReadyForUpdate" }))).toBe(false);
  });
});

describe("nodeToSecret", () => {
  test("should map to the secret named by the node label", () => {
    expect(nodeToSecret(node({ secret: "gardener-node-agent-pool" }))).toEqual([
      { namespace: "kube-system", name: "gardener-node-agent-pool" },
    ]);
  });
  test("should map to nothing without the label", () => expect(nodeToSecret(node())).toEqual([]));
});
