import { describe, expect, test } from "bun:test";
import { createProfilingHandler } from "./profiling.ts";

const get = (path: string) => new Request(`http://127.0.0.1${path}`);

describe("createProfilingHandler", () => {
  const handler = createProfilingHandler(["gardener-node-agent", "--config-dir=/var/lib/gardener-node-agent"]);

  test("should leave every other path to the server", async () => {
    expect(await handler(get("/metrics"))).toBeUndefined();
    expect(await handler(get("/debug/other"))).toBeUndefined();
  });

  test("should list the profiles and give the command line NUL-separated", async () => {
    expect(await (await handler(get("/debug/pprof/")))?.text()).toContain("heap ");
    expect(await (await handler(get("/debug/pprof/cmdline")))?.text()).toBe(
      "gardener-node-agent\0--config-dir=/var/lib/gardener-node-agent",
    );
    expect((await handler(get("/debug/pprof")))?.status).toBe(301);
  });

  test("should serve a heap snapshot DevTools can open", async () => {
    const res = await handler(get("/debug/pprof/heap"));
    expect(res?.headers.get("content-disposition")).toBe('attachment; filename="heap.heapsnapshot"');
    const snap = (await res?.json()) as { snapshot: { meta: { node_fields: string[] } } };
    expect(snap.snapshot.meta.node_fields).toContain("self_size");
  });

  test("should record a CPU profile over the given seconds and refuse a second one meanwhile", async () => {
    const first = handler(get("/debug/pprof/profile?seconds=1"));
    const second = await handler(get("/debug/pprof/profile?seconds=1"));
    expect(second?.status).toBe(409);
    const profile = (await (await first)?.json()) as { nodes: unknown[]; samples: number[] };
    expect(profile.nodes.length).toBeGreaterThan(0);
    expect(Array.isArray(profile.samples)).toBe(true);
  });

  test.each(["0", "301", "1.5", "x"])("should refuse seconds=%s", async (seconds) => {
    const res = await handler(get(`/debug/pprof/profile?seconds=${seconds}`));
    expect(res?.status).toBe(400);
  });

  test("should answer 404 for a profile it does not have", async () => {
    expect((await handler(get("/debug/pprof/goroutine")))?.status).toBe(404);
  });
});
