/** The clock constants of chunked rollouts (issue 16); tests shorten them (cli/timings.ts), production uses the defaults. */
export interface RolloutTimings {
  /** Ready and SystemdUnitsReady must have been True this long before a slot is released. */
  readonly healthyForMs: number;
  /** A slot not healthy this long after it was taken becomes `failed`. */
  readonly verifyTimeoutMs: number;
  /** applying/verifying/waiting entries are renewed at least this often. */
  readonly renewEveryMs: number;
  /** An entry not renewed this long is stale: active ones count as failed, waiting ones are ignored. */
  readonly staleAfterMs: number;
  /** How often a verifying node looks at its Node again. */
  readonly verifyPollMs: number;
}

export const defaultRolloutTimings: RolloutTimings = {
  healthyForMs: 60_000,
  verifyTimeoutMs: 600_000,
  renewEveryMs: 30_000,
  staleAfterMs: 300_000,
  verifyPollMs: 5_000,
};

/**
 * The most a waiting node pauses at random before it tries a free slot: of K waiters one tries after about
 * this / K, and about K × (latency) / this at once. K is unknown (waiters write nothing): N × 0.5 s, ≤ 10 s.
 */
export const slotJitterMs = (t: RolloutTimings, n: number): number => Math.min(10_000, t.renewEveryMs, n * 500);
