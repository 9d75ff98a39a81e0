// The metrics and health servers. profiling.ts is not re-exported: it is loaded only when profiling
// is enabled (`await import("./profiling.ts")`), so a static import of this file never loads it.
export { HealthChecks } from "./health.ts";
export type { HealthCheck } from "./health.ts";
export { createMetricsRegistry } from "./metrics.ts";
export type { Collector, Gauge, MetricFamily, MetricsRegistry, Sample } from "./metrics.ts";
export { buildInfoCollector, processCollector } from "./process-metrics.ts";
export { startHealthServer, startMetricsServer } from "./serve.ts";
export type { RunningServer } from "./serve.ts";
