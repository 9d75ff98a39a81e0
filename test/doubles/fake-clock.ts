import type { Clock } from "../../src/clock/index.ts";

interface Sleeper {
  readonly deadline: number;
  readonly seq: number;
  readonly resolve: () => void;
}

/**
 * A Clock whose time moves only when a test calls `step(ms)` (or `set`). Sleeps whose deadline has
 * been reached resolve in deadline order; a sleep of 0 ms (or less) resolves at once.
 * After stepping, `await clock.settle()` lets the woken code run before asserting.
 */
export class FakeClock implements Clock {
  #now: number;
  #seq = 0;
  #sleepers: Sleeper[] = [];

  constructor(startMs = Date.UTC(2026, 0, 1, 0, 0, 0)) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (ms <= 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const sleeper: Sleeper = {
        deadline: this.#now + ms,
        seq: this.#seq++,
        resolve: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.#sleepers = this.#sleepers.filter((s) => s !== sleeper);
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#sleepers.push(sleeper);
    });
  }

  /** Move time forward by `ms` and wake every sleeper whose deadline is reached. */
  step(ms: number): void {
    this.set(this.#now + ms);
  }

  /** Jump to an absolute time (never backwards) and wake due sleepers. */
  set(ms: number): void {
    if (ms < this.#now) throw new Error(`fake clock cannot go backwards (${ms} < ${this.#now})`);
    this.#now = ms;
    const due = this.#sleepers.filter((s) => s.deadline <= ms).sort((a, b) => a.deadline - b.deadline || a.seq - b.seq);
    this.#sleepers = this.#sleepers.filter((s) => s.deadline > ms);
    for (const s of due) s.resolve();
  }

  /** Number of sleeps still waiting. */
  pending(): number {
    return this.#sleepers.length;
  }

  /** The earliest deadline among pending sleeps, if any. */
  nextDeadline(): number | undefined {
    let next: number | undefined;
    for (const s of this.#sleepers) if (next === undefined || s.deadline < next) next = s.deadline;
    return next;
  }

  /** Let promise continuations and macrotasks queued by woken sleepers run (a few event-loop turns). */
  async settle(turns = 5): Promise<void> {
    for (let i = 0; i < turns; i++) await new Promise<void>((r) => setImmediate(r));
  }

  /** Resolve once at least `n` sleeps are pending (polls the event loop, bounded by `maxTurns`). */
  async waitForSleepers(n = 1, maxTurns = 10_000): Promise<void> {
    for (let i = 0; i < maxTurns; i++) {
      if (this.#sleepers.length >= n) return;
      await new Promise<void>((r) => setImmediate(r));
    }
    throw new Error(`fake clock: expected ${n} pending sleeps, have ${this.#sleepers.length}`);
  }
}
