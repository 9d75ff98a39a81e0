import type { Clock } from "../clock/index.ts";

/** Decides how long a key waits before it is handed out again (client-go workqueue.RateLimiter). */
export interface RateLimiter {
  /** Delay in ms for the next retry of `key`; each call counts as one more failure. */
  when(key: string): number;
  /** Reset the failure history of `key` (after success or a requested requeue). */
  forget(key: string): void;
  /** How many times `key` has been rate-limited since the last forget. */
  numRequeues(key: string): number;
}

/**
 * Token bucket with golang.org/x/time/rate reservation semantics: a reservation always succeeds and
 * returns how long the caller must wait; tokens may go negative so waits queue up fairly.
 */
export class TokenBucket {
  #tokens: number;
  #last: number;

  constructor(
    readonly qps: number,
    readonly burst: number,
    private readonly clock: Clock,
  ) {
    this.#tokens = burst;
    this.#last = clock.now();
  }

  /** Take one token; returns the delay in ms before it may be used. qps ≤ 0 means unlimited. */
  reserve(): number {
    if (this.qps <= 0) return 0;
    const now = this.clock.now();
    const elapsed = Math.max(0, now - this.#last);
    this.#last = Math.max(this.#last, now);
    this.#tokens = Math.min(this.burst, this.#tokens + (elapsed * this.qps) / 1000);
    this.#tokens -= 1;
    return this.#tokens >= 0 ? 0 : Math.ceil((-this.#tokens * 1000) / this.qps);
  }

  /** Give back a reserved token (the caller gave up before using it). */
  cancel(): void {
    if (this.qps > 0) this.#tokens = Math.min(this.burst, this.#tokens + 1);
  }

  /** Wait until a token is available. On abort the reservation is returned and the signal's reason thrown. */
  async wait(signal?: AbortSignal): Promise<void> {
    const delay = this.reserve();
    if (delay === 0) return;
    try {
      await this.clock.sleep(delay, signal);
    } catch (err) {
      this.cancel();
      throw err;
    }
  }
}

/** Per-key exponential backoff: base × 2^(failures-1), capped (client-go ItemExponentialFailureRateLimiter). */
export class ExponentialFailureRateLimiter implements RateLimiter {
  readonly #failures = new Map<string, number>();

  constructor(
    readonly baseMs = 5,
    readonly maxMs = 1_000_000,
  ) {}

  when(key: string): number {
    const n = this.#failures.get(key) ?? 0;
    this.#failures.set(key, n + 1);
    const delay = this.baseMs * 2 ** n;
    return Number.isFinite(delay) ? Math.min(delay, this.maxMs) : this.maxMs;
  }

  forget(key: string): void {
    this.#failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.#failures.get(key) ?? 0;
  }
}

/** One bucket shared by all keys (client-go BucketRateLimiter); it keeps no per-key history. */
class BucketRateLimiter implements RateLimiter {
  constructor(private readonly bucket: TokenBucket) {}
  when(_key: string): number {
    return this.bucket.reserve();
  }
  forget(_key: string): void {}
  numRequeues(_key: string): number {
    return 0;
  }
}

/** The longest delay of all limiters (client-go MaxOfRateLimiter). */
export class MaxOfRateLimiter implements RateLimiter {
  readonly #limiters: readonly RateLimiter[];
  constructor(...limiters: RateLimiter[]) {
    this.#limiters = limiters;
  }
  when(key: string): number {
    let max = 0;
    for (const l of this.#limiters) max = Math.max(max, l.when(key));
    return max;
  }
  forget(key: string): void {
    for (const l of this.#limiters) l.forget(key);
  }
  numRequeues(key: string): number {
    let max = 0;
    for (const l of this.#limiters) max = Math.max(max, l.numRequeues(key));
    return max;
  }
}

export interface ControllerRateLimiterOptions {
  /** Per-key backoff base (default 5 ms). */
  baseDelayMs?: number;
  /** Per-key backoff cap (default 1000 s; systemd-unit-check uses its syncPeriod). */
  maxDelayMs?: number;
  /** Global bucket (default 10 qps, burst 100). */
  qps?: number;
  burst?: number;
}

/** controller-runtime's default: max(per-key 5 ms × 2^(n-1) capped 1000 s, bucket 10 qps / burst 100). */
export function defaultControllerRateLimiter(clock: Clock, opts: ControllerRateLimiterOptions = {}): RateLimiter {
  return new MaxOfRateLimiter(
    new ExponentialFailureRateLimiter(opts.baseDelayMs ?? 5, opts.maxDelayMs ?? 1_000_000),
    new BucketRateLimiter(new TokenBucket(opts.qps ?? 10, opts.burst ?? 100, clock)),
  );
}
