/** How one reconcile ended, as controller-runtime labels `controller_runtime_reconcile_total{result}`. */
export type ReconcileOutcome = "success" | "error" | "requeue_after";

/** controller-runtime's reconcile_time_seconds buckets. */
export const reconcileTimeBuckets: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 4.5,
  5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

export interface ControllerStats {
  readonly name: string;
  readonly workers: number;
  readonly activeWorkers: number;
  readonly reconcileTotal: Readonly<Record<ReconcileOutcome, number>>;
  readonly reconcileErrors: number;
  readonly terminalErrors: number;
  /** Rate-limited requeues after errors (workqueue_retries_total). */
  readonly retries: number;
  readonly reconcileTimeSeconds: {
    readonly sum: number;
    readonly count: number;
    /** Cumulative counts per upper bound in `reconcileTimeBuckets` (+Inf is `count`). */
    readonly buckets: readonly number[];
  };
  readonly queueDepth: number;
}

/** Mutable counters behind ControllerStats. */
export class StatsRecorder {
  readonly total: Record<ReconcileOutcome, number> = { success: 0, error: 0, requeue_after: 0 };
  errors = 0;
  terminal = 0;
  retries = 0;
  sum = 0;
  count = 0;
  active = 0;
  readonly buckets: number[] = reconcileTimeBuckets.map(() => 0);

  observe(outcome: ReconcileOutcome, seconds: number, terminal: boolean): void {
    this.total[outcome]++;
    if (outcome === "error") this.errors++;
    if (terminal) this.terminal++;
    this.sum += seconds;
    this.count++;
    reconcileTimeBuckets.forEach((le, i) => {
      if (seconds <= le) this.buckets[i] = (this.buckets[i] ?? 0) + 1;
    });
  }
}
