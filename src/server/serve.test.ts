import { afterEach, describe, expect, test } from "bun:test";
import { HealthChecks } from "./health.ts";
import { createMetricsRegistry } from "./metrics.ts";
import { ListenError, startHealthServer, startMetricsServer } from "./serve.ts";
import type { RunningServer } from "./serve.ts";

const servers: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});
const track = (s: RunningServer) => {
  servers.push(s);
  return s;
};

describe("startHealthServer", () => {
  test("should answer /healthz and /readyz, and flip readyz when a check starts passing", async () => {
    const checks = new HealthChecks();
    let ready = false;
    checks.addReadyzCheck("started", () => {
      if (!ready) throw new Error("not started");
    });
    const s = track(startHealthServer({ bindAddress: "127.0.0.1", port: 0 }, checks));
    const base = `http://127.0.0.1:${s.port}`;
    const healthz = await fetch(`${base}/healthz`);
    expect([healthz.status, await healthz.text()]).toEqual([200, "ok"]);
    const notReady = await fetch(`${base}/readyz`);
    expect([notReady.status, await notReady.text()]).toEqual([500, "[-]started failed: reason withheld\nreadyz check failed\n"]);
    ready = true;
    const readyz = await fetch(`${base}/readyz`);
    expect([readyz.status, await readyz.text()]).toEqual([200, "ok"]);
    expect(await (await fetch(`${base}/healthz?verbose`)).text()).toBe("[+]ping ok\nhealthz check passed\n");
    expect((await fetch(`${base}/healthz/ping`)).status).toBe(200);
    expect((await fetch(`${base}/other`)).status).toBe(404);
  });

  test("should report a port in use as a ListenError", () => {
    const s = track(startHealthServer({ bindAddress: "127.0.0.1", port: 0 }, new HealthChecks()));
    expect(() => track(startHealthServer({ bindAddress: "127.0.0.1", port: s.port }, new HealthChecks()))).toThrow(ListenError);
  });
});

describe("startMetricsServer", () => {
  test("should serve /metrics with the 0.0.4 content type", async () => {
    const registry = createMetricsRegistry();
    registry.counter({ name: "c_total", help: "C." }).inc();
    const s = track(startMetricsServer({ bindAddress: "", port: 0 }, registry));
    const res = await fetch(`http://127.0.0.1:${s.port}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    expect(await res.text()).toContain("c_total 1\n");
  });
});
