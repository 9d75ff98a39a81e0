import type { Clock } from "../clock/index.ts";
import type { RateLimiter } from "./rate-limiter.ts";

interface Delayed {
  readonly readyAt: number;
  readonly cancel: AbortController;
}

/**
 * A rate-limited, delaying work queue of string keys with client-go semantics:
 * - a key waiting in the queue is held once (duplicates collapse);
 * - a key being processed is never handed out again until `done(key)`; re-adding it meanwhile
 *   marks it dirty, and it is queued again when `done` is called;
 * - `addAfter` keeps only the earliest pending deadline per key;
 * - after `shutdown`, adds are ignored and `get` returns undefined at once; keys still queued are
 *   dropped (in-flight keys finish and call `done`), which is what a stopping agent wants.
 */
export class WorkQueue {
  readonly #queue: string[] = [];
  readonly #dirty = new Set<string>();
  readonly #processing = new Set<string>();
  readonly #delayed = new Map<string, Delayed>();
  readonly #waiters: Array<(key: string | undefined) => void> = [];
  readonly #stop = new AbortController();
  #shuttingDown = false;

  constructor(
    private readonly clock: Clock,
    private readonly limiter: RateLimiter,
  ) {}

  add(key: string): void {
    if (this.#shuttingDown || this.#dirty.has(key)) return;
    this.#dirty.add(key);
    if (this.#processing.has(key)) return;
    this.#push(key);
  }

  /** Add after `ms` milliseconds of the injected clock (at once when ms ≤ 0). */
  addAfter(key: string, ms: number): void {
    if (this.#shuttingDown) return;
    if (ms <= 0) return this.add(key);
    const readyAt = this.clock.now() + ms;
    const existing = this.#delayed.get(key);
    if (existing !== undefined) {
      if (existing.readyAt <= readyAt) return;
      existing.cancel.abort();
    }
    const cancel = new AbortController();
    const entry: Delayed = { readyAt, cancel };
    this.#delayed.set(key, entry);
    const signal = AbortSignal.any([cancel.signal, this.#stop.signal]);
    this.clock.sleep(ms, signal).then(
      () => {
        if (this.#delayed.get(key) === entry) this.#delayed.delete(key);
        this.add(key);
      },
      () => {
        // Cancelled: superseded by an earlier deadline, or the queue shut down. Nothing to do.
      },
    );
  }

  /** Add after the rate limiter's delay for this key (counts one failure). */
  addRateLimited(key: string): void {
    this.addAfter(key, this.limiter.when(key));
  }

  /** Stop tracking failures of `key` (its next failure starts from the base delay again). */
  forget(key: string): void {
    this.limiter.forget(key);
  }

  numRequeues(key: string): number {
    return this.limiter.numRequeues(key);
  }

  /**
   * Wait for the next key. Resolves undefined when the queue is shut down or `signal` aborts.
   * The caller must call `done(key)` when finished with it.
   */
  get(signal?: AbortSignal): Promise<string | undefined> {
    if (this.#shuttingDown || signal?.aborted) return Promise.resolve(undefined);
    const key = this.#take();
    if (key !== undefined) return Promise.resolve(key);
    return new Promise((resolve) => {
      const waiter = (k: string | undefined) => {
        signal?.removeEventListener("abort", onAbort);
        resolve(k);
      };
      const onAbort = () => {
        const i = this.#waiters.indexOf(waiter);
        if (i >= 0) this.#waiters.splice(i, 1);
        resolve(undefined);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  done(key: string): void {
    this.#processing.delete(key);
    if (this.#dirty.has(key)) this.#push(key);
  }

  /** Stop accepting keys, cancel delayed adds and release every waiting `get` with undefined. */
  shutdown(): void {
    this.#shuttingDown = true;
    this.#stop.abort();
    this.#delayed.clear();
    for (const w of this.#waiters.splice(0)) w(undefined);
  }

  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /** Keys ready to be handed out (not counting delayed or in-flight ones). */
  len(): number {
    return this.#queue.length;
  }

  /** Keys waiting for a delay to pass. */
  delayedLen(): number {
    return this.#delayed.size;
  }

  /** Keys currently handed out and not yet done. */
  processingLen(): number {
    return this.#processing.size;
  }

  #push(key: string): void {
    const waiter = this.#waiters.shift();
    if (waiter !== undefined) {
      this.#dirty.delete(key);
      this.#processing.add(key);
      waiter(key);
      return;
    }
    this.#queue.push(key);
  }

  #take(): string | undefined {
    const key = this.#queue.shift();
    if (key === undefined) return undefined;
    this.#dirty.delete(key);
    this.#processing.add(key);
    return key;
  }
}
