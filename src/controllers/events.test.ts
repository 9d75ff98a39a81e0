import { describe, expect, test } from "bun:test";
import type { Kube, KubeObject } from "../kube/index.ts";
import type { LogFields, Logger } from "../log/index.ts";
import { nopLogger } from "../log/index.ts";
import { createEventRecorder, nodeRef } from "./events.ts";

function setup(fail = false) {
  const created: { namespace: string; obj: KubeObject }[] = [];
  const errors: [string, LogFields | undefined][] = [];
  const kube = {
    async create(_res: unknown, namespace: string, obj: KubeObject) {
      if (fail) throw new Error("forbidden");
      created.push({ namespace, obj });
      return obj;
    },
  } as unknown as Kube;
  const log: Logger = { debug() {}, info() {}, warn() {}, error: (m, f) => errors.push([m, f]), child: () => log };
  const rec = createEventRecorder({
    kube,
    clock: { now: () => Date.UTC(2026, 0, 2, 3, 4, 5, 678), sleep: async () => {} },
    log,
    component: "gardener-node-agent",
    host: "h",
  });
  return { rec, created, errors };
}

describe("createEventRecorder", () => {
  test("should record a Node event in namespace default", async () => {
    const { rec, created } = setup();
    await rec.event(
      nodeRef({ metadata: { name: "n1", uid: "u1" } }),
      "Normal",
      "OSCApplied",
      "Reconcile",
      "Operating system config has been applied successfully",
    );
    expect(created).toHaveLength(1);
    const { namespace, obj } = created[0] as { namespace: string; obj: KubeObject };
    expect(namespace).toBe("default");
    expect(obj.metadata.namespace).toBe("default");
    expect(obj.metadata.name?.startsWith("n1.")).toBe(true);
    expect(obj).toMatchObject({
      involvedObject: { kind: "Node", apiVersion: "v1", name: "n1", uid: "u1" },
      type: "Normal",
      reason: "OSCApplied",
      action: "Reconcile",
      message: "Operating system config has been applied successfully",
      source: { component: "gardener-node-agent", host: "h" },
      firstTimestamp: "2026-01-02T03:04:05Z",
      lastTimestamp: "2026-01-02T03:04:05Z",
      count: 1,
    });
  });

  test("should write an aggregated record with its count and first and last timestamps", async () => {
    const { rec, created } = setup();
    const first = Date.UTC(2026, 0, 2, 3, 0, 0, 400);
    await rec.write({
      obj: { kind: "Node", apiVersion: "v1", name: "n1" },
      type: "Normal",
      reason: "SystemDUnitRestart",
      action: "Restart",
      note: "processed restart of unit a.service",
      count: 7,
      firstMs: first,
      lastMs: first + 61_000,
    });
    expect(created[0]?.obj).toMatchObject({ firstTimestamp: "2026-01-02T03:00:00Z", lastTimestamp: "2026-01-02T03:01:01Z", count: 7 });
  });

  test("should log and not throw when the event cannot be written", async () => {
    const { rec, errors } = setup(true);
    await rec.event(nodeRef({ metadata: { name: "n1" } }), "Warning", "SystemDUnitRestart", "Restart", "x");
    expect(errors.map(([m]) => m)).toEqual(["Failed to record event"]);
  });
});

describe("createEventRecorder names", () => {
  test("should give events recorded in the same millisecond distinct names", async () => {
    const names: string[] = [];
    const kube = { create: async (_r: unknown, _ns: string, obj: { metadata: { name: string } }) => (names.push(obj.metadata.name), obj) };
    const rec = createEventRecorder({
      kube: kube as never,
      clock: { now: () => 1_700_000_000_000, sleep: async () => {} },
      log: nopLogger,
      component: "c",
      host: "h",
    });
    await Promise.all(Array.from({ length: 50 }, () => rec.event({ kind: "Node", apiVersion: "v1", name: "n" }, "Normal", "R", "a", "x")));
    expect(new Set(names).size).toBe(50);
    for (const n of names) expect(n).toMatch(/^n\.[0-9a-f]+$/);
  });
});
