import { describe, expect, test } from "bun:test";
import { ApiError } from "../../kube/index.ts";
import type { KubeObject, Reader } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import type { HealthChecker } from "./checker.ts";
import { createReconciler, HealthCheckFailedError, HealthCheckNodeError } from "./reconcile.ts";

const log: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => log };
const key = { namespace: "", name: "node-a" };
const cached: KubeObject = { metadata: { name: "node-a" }, status: { addresses: [{ type: "InternalIP", address: "10.0.0.5" }] } };
const reader = (get: Reader["get"]): Reader => ({ get, list: () => Promise.reject(new Error("unused")) });
const nodeReader = reader(async <T extends KubeObject>() => cached as T);
const signal = new AbortController().signal;

describe("health-check reconcile", () => {
  test("should run every checker on its own copy of the Node and look again after 30 s", async () => {
    const seen: KubeObject[] = [];
    const mutating = (name: string): HealthChecker => ({
      name,
      check: async (n) => {
        seen.push(n);
        (n["status"] as Record<string, unknown>)["addresses"] = [];
      },
    });
    const r = createReconciler({ nodes: nodeReader, checkers: [mutating("a"), mutating("b")], log });
    expect(await r(key, signal)).toEqual({ requeueAfterMs: 30_000 });
    expect(seen).toHaveLength(2);
    expect(seen[0]).not.toBe(seen[1]);
    expect(cached["status"]).toEqual({ addresses: [{ type: "InternalIP", address: "10.0.0.5" }] });
  });

  test("should run the checkers in parallel", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const started: string[] = [];
    const waiting: HealthChecker = { name: "slow", check: async () => (started.push("slow"), await gate) };
    const other: HealthChecker = { name: "fast", check: async () => (started.push("fast"), release()) };
    await createReconciler({ nodes: nodeReader, checkers: [waiting, other], log })(key, signal);
    expect(started).toEqual(["slow", "fast"]);
  });

  test("should fail with every checker's error after all of them finished", async () => {
    const finished: string[] = [];
    const failing = (name: string): HealthChecker => ({
      name,
      check: async () => {
        finished.push(name);
        throw new Error(`${name} broke`);
      },
    });
    const ok: HealthChecker = { name: "ok", check: async () => void finished.push("ok") };
    const err = await createReconciler({ nodes: nodeReader, checkers: [failing("containerd"), ok, failing("kubelet")], log })(
      key,
      signal,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HealthCheckFailedError);
    expect((err as Error).message).toBe("health checks failed: containerd: containerd broke; kubelet: kubelet broke");
    expect((err as HealthCheckFailedError).errors).toHaveLength(2);
    expect(finished.sort()).toEqual(["containerd", "kubelet", "ok"]);
  });

  test("should fail, not stop, when the Node is not in the cache", async () => {
    const missing = reader(() => Promise.reject(new ApiError(404, "NotFound", 'nodes "node-a" not found')));
    const err = await createReconciler({ nodes: missing, checkers: [], log })(key, signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HealthCheckNodeError);
    expect((err as Error).message).toBe('error retrieving object from store: nodes "node-a" not found');
  });
});
