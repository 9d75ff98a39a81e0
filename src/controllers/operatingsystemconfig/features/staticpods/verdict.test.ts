import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../../../../kube/index.ts";
import { staticPodName, staticPodsVerdict } from "./verdict.ts";

const mirror = (name: string, hash: string | undefined, phase: string, ready: boolean): KubeObject => ({
  metadata: {
    name,
    namespace: "kube-system",
    labels: { "static-pod": "true" },
    ...(hash !== undefined ? { annotations: { "gardener.cloud/config.mirror": hash } } : {}),
  },
  status: { phase, conditions: [{ type: "Ready", status: ready ? "True" : "False" }] },
});
const want = new Map([["foo", "abc"]]);

describe("staticPodsVerdict (9.1, scenario 13)", () => {
  test.each<[string, ReadonlyMap<string, string>, KubeObject[], boolean]>([
    ["no manifests", new Map(), [], true],
    ["no manifests, mirror pods present", new Map(), [mirror("bar-n1", "x", "Pending", false)], true],
    ["no mirror pod yet", want, [], false],
    ["the mirror pod runs an older manifest", want, [mirror("foo-n1", "old", "Running", true)], false],
    ["the mirror pod has no hash", want, [mirror("foo-n1", undefined, "Running", true)], false],
    ["the mirror pod is Pending", want, [mirror("foo-n1", "abc", "Pending", false)], false],
    ["the mirror pod is Running but not Ready", want, [mirror("foo-n1", "abc", "Running", false)], false],
    ["the mirror pod is Running and Ready", want, [mirror("foo-n1", "abc", "Running", true)], true],
    ["the mirror pod Succeeded and is Ready", want, [mirror("foo-n1", "abc", "Succeeded", true)], true],
    ["the mirror pod Failed", want, [mirror("foo-n1", "abc", "Failed", true)], false],
    [
      "an extra mirror pod is not in the OSC",
      want,
      [mirror("foo-n1", "abc", "Running", true), mirror("bar-n1", "x", "Running", true)],
      false,
    ],
  ])("should decide correctly when %s", (_name, desired, pods, converged) => {
    expect(staticPodsVerdict(desired, pods, "n1").converged).toBe(converged);
  });

  test("should say which static pod it waits for and why", () => {
    expect(staticPodsVerdict(want, [mirror("foo-n1", "abc", "Pending", false)], "n1")).toEqual({
      converged: false,
      why: "static pod foo is Pending",
    });
    expect(staticPodsVerdict(want, [], "n1")).toEqual({ converged: false, why: "static pod foo has no mirror pod yet" });
  });
});

describe("staticPodName", () => {
  test.each([
    ["kube-apiserver-node-1", "node-1", "kube-apiserver"],
    ["kube-apiserver", "node-1", "kube-apiserver"],
    ["node-1", "node-1", "node-1"],
  ])("should strip the node suffix of %s", (mirrorName, node, want) => {
    expect(staticPodName(mirrorName, node)).toBe(want);
  });
});
