import type { Controller } from "../../kube/index.ts";
import { reconcileTimeBuckets } from "../../kube/index.ts";
import type { Collector, MetricFamily, Sample } from "../../server/index.ts";

/** controller-runtime's metric families, computed at scrape time from each controller's stats. */
export function controllerCollector(controllers: () => readonly Controller[]): Collector {
  return () => {
    const total: Sample[] = [];
    const errors: Sample[] = [];
    const terminal: Sample[] = [];
    const active: Sample[] = [];
    const depth: Sample[] = [];
    const retries: Sample[] = [];
    const time: Sample[] = [];
    for (const c of controllers()) {
      const s = c.stats();
      const controller = s.name;
      for (const [result, value] of Object.entries(s.reconcileTotal)) total.push({ labels: { controller, result }, value });
      errors.push({ labels: { controller }, value: s.reconcileErrors });
      terminal.push({ labels: { controller }, value: s.terminalErrors });
      active.push({ labels: { controller }, value: s.activeWorkers });
      depth.push({ labels: { name: controller }, value: s.queueDepth });
      retries.push({ labels: { name: controller }, value: s.retries });
      reconcileTimeBuckets.forEach((le, i) => {
        time.push({ suffix: "_bucket", labels: { controller, le: String(le) }, value: s.reconcileTimeSeconds.buckets[i] ?? 0 });
      });
      time.push({ suffix: "_bucket", labels: { controller, le: "+Inf" }, value: s.reconcileTimeSeconds.count });
      time.push({ suffix: "_sum", labels: { controller }, value: s.reconcileTimeSeconds.sum });
      time.push({ suffix: "_count", labels: { controller }, value: s.reconcileTimeSeconds.count });
    }
    const family = (name: string, help: string, type: MetricFamily["type"], samples: Sample[]): MetricFamily => ({
      name,
      help,
      type,
      samples,
    });
    return [
      family("controller_runtime_reconcile_total", "Total number of reconciliations per controller.", "counter", total),
      family("controller_runtime_reconcile_errors_total", "Total number of reconciliation errors per controller.", "counter", errors),
      family(
        "controller_runtime_terminal_reconcile_errors_total",
        "Total number of terminal reconciliation errors per controller.",
        "counter",
        terminal,
      ),
      family("controller_runtime_active_workers", "Number of currently used workers per controller.", "gauge", active),
      family("controller_runtime_reconcile_time_seconds", "Length of time per reconciliation per controller.", "histogram", time),
      family("workqueue_depth", "Current depth of workqueue.", "gauge", depth),
      family("workqueue_retries_total", "Total number of retries handled by workqueue.", "counter", retries),
    ];
  };
}
