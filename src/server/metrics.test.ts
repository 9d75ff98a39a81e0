import { describe, expect, test } from "bun:test";
import { createMetricsRegistry, DuplicateMetricError } from "./metrics.ts";
import { buildInfoCollector, processCollector } from "./process-metrics.ts";

describe("createMetricsRegistry", () => {
  test("should render counters and gauges with labels in text format 0.0.4", async () => {
    const r = createMetricsRegistry();
    const c = r.counter({ name: "reconcile_total", help: "Total reconciles." });
    c.inc({ controller: "token", result: "success" });
    c.inc({ result: "success", controller: "token" }, 2);
    const g = r.gauge({ name: "workers", help: "Active workers." });
    g.set(3);
    g.dec();
    expect(await r.render()).toBe(
      [
        "# HELP reconcile_total Total reconciles.",
        "# TYPE reconcile_total counter",
        'reconcile_total{controller="token",result="success"} 3',
        "# HELP workers Active workers.",
        "# TYPE workers gauge",
        "workers 2",
        "",
      ].join("\n"),
    );
  });

  test("should render histogram buckets, sum and count", async () => {
    const r = createMetricsRegistry();
    const h = r.histogram({ name: "d_seconds", help: "D.", buckets: [0.1, 1] });
    h.observe(0.05);
    h.observe(0.5);
    h.observe(5);
    expect(await r.render()).toBe(
      [
        "# HELP d_seconds D.",
        "# TYPE d_seconds histogram",
        'd_seconds_bucket{le="0.1"} 1',
        'd_seconds_bucket{le="1"} 2',
        'd_seconds_bucket{le="+Inf"} 3',
        "d_seconds_sum 5.55",
        "d_seconds_count 3",
        "",
      ].join("\n"),
    );
  });

  test("should escape label values", async () => {
    const r = createMetricsRegistry();
    r.gauge({ name: "g", help: "h" }).set(1, { path: 'a"b\\c\nd' });
    expect(await r.render()).toContain('g{path="a\\"b\\\\c\\nd"} 1');
  });

  test("should refuse a second metric with the same name", () => {
    const r = createMetricsRegistry();
    r.counter({ name: "x", help: "x" });
    expect(() => r.gauge({ name: "x", help: "x" })).toThrow(DuplicateMetricError);
  });

  test("should include the build info and process metrics", async () => {
    const r = createMetricsRegistry();
    r.addCollector(buildInfoCollector("v1.2.3", "abc"));
    r.addCollector(processCollector);
    const text = await r.render();
    expect(text).toContain('gardener_node_agent_build_info{version="v1.2.3",revision="abc"} 1\n');
    for (const name of ["process_cpu_seconds_total", "process_resident_memory_bytes", "process_start_time_seconds", "process_open_fds"]) {
      expect(text).toMatch(new RegExp(`^${name} [0-9.e+]+$`, "m"));
    }
  });
});
