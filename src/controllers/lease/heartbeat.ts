import type { Clock } from "../../clock/index.ts";
import type { HealthCheck, MetricsRegistry } from "../../server/index.ts";

export const healthCheckName = "lease-renewal";
const renewalsMetric = "gardener_node_agent_lease_renewals_total";
const lastRenewalMetric = "gardener_node_agent_lease_last_renewal_timestamp_seconds";

/** The healthz check's failure: no successful renewal for longer than the lease duration. */
export class LeaseNotRenewedError extends Error {
  override readonly name = "LeaseNotRenewedError";
  constructor(
    readonly sinceMs: number,
    leaseDurationSeconds: number,
  ) {
    super(`lease not renewed for ${Math.floor(sinceMs / 1000)}s (longer than the lease duration of ${leaseDurationSeconds}s)`);
  }
}

/**
 * Heartbeat bookkeeping, like gardenlet's seed-lease health: every successful renewal counts,
 * and the healthz check fails once the last success (or the start) lies more than the lease
 * duration in the past; the next successful renewal makes it pass again.
 */
export class LeaseHeartbeat {
  #last: number;
  #renewals = 0;
  #begun = false;
  readonly #onRenewed: ((atMs: number) => void) | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly leaseDurationSeconds: number,
    metrics?: MetricsRegistry,
  ) {
    this.#last = clock.now();
    if (metrics !== undefined) {
      const total = metrics.counter({ name: renewalsMetric, help: "Number of successful renewals of the node agent's heartbeat Lease." });
      const last = metrics.gauge({
        name: lastRenewalMetric,
        help: "Unix time in seconds of the last successful renewal of the node agent's heartbeat Lease.",
      });
      this.#onRenewed = (atMs) => {
        total.inc();
        last.set(atMs / 1000);
      };
    }
  }

  /**
   * The controller's first reconcile is starting: the grace period before the first renewal counts
   * from now, not from construction (caches and bootstrap runnables may take a while before it).
   */
  begin(): void {
    if (this.#begun) return;
    this.#begun = true;
    if (this.#renewals === 0) this.#last = Math.max(this.#last, this.clock.now());
  }

  /** A renewal (create or update) succeeded; `atMs` is the renewTime written. */
  renewed(atMs: number): void {
    this.#last = Math.max(this.#last, atMs);
    this.#renewals++;
    this.#onRenewed?.(atMs);
  }

  get renewals(): number {
    return this.#renewals;
  }

  get lastRenewalMs(): number {
    return this.#last;
  }

  /** Throws LeaseNotRenewedError when more than leaseDurationSeconds passed without a renewal. */
  check(): void {
    const since = this.clock.now() - this.#last;
    if (since > this.leaseDurationSeconds * 1000) throw new LeaseNotRenewedError(since, this.leaseDurationSeconds);
  }

  /** The check in the shape `HealthChecks.addHealthzCheck` takes. */
  get healthCheck(): HealthCheck {
    return () => this.check();
  }
}
