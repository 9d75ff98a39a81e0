export { DuplicateCheckError, HealthChecks, reportBody } from "./health.ts";
export type { CheckReport, CheckResult, HealthCheck } from "./health.ts";
export { createMetricsRegistry, defaultBuckets, DuplicateMetricError, renderFamilies } from "./metrics.ts";
export type { Collector, Counter, Gauge, Histogram, Labels, MetricFamily, MetricOptions, MetricsRegistry, MetricType, Sample } from "./metrics.ts";
export { buildInfoCollector, processCollector } from "./process-metrics.ts";
export { ListenError, startHealthServer, startMetricsServer } from "./serve.ts";
export type { Endpoint, RunningServer } from "./serve.ts";
export { createProfilingHandler, profilingPrefix } from "./profiling.ts";
export type { ProfilingHandler } from "./profiling.ts";
