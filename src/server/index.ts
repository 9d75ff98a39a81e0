// The metrics and health servers. profiling.ts is not re-exported: it is loaded only when profiling
// is enabled (`await import("../server/profiling.ts")`), so a static import of this file never loads it.
export { DuplicateCheckError, HealthChecks, reportBody } from "./health.ts";
export type { CheckReport, CheckResult, HealthCheck } from "./health.ts";
export { createMetricsRegistry, defaultBuckets, DuplicateMetricError, renderFamilies } from "./metrics.ts";
export type { Collector, Counter, Gauge, Histogram, Labels, MetricFamily, MetricOptions, MetricsRegistry, MetricType, Sample } from "./metrics.ts";
export { buildInfoCollector, processCollector } from "./process-metrics.ts";
export { ListenError, startHealthServer, startMetricsServer } from "./serve.ts";
export type { Endpoint, RunningServer } from "./serve.ts";
