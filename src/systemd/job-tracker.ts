import type { Clock } from "../clock/index.ts";

/** How many finished jobs are remembered for a submitter whose reply has not been read yet. */
const RECENT_LIMIT = 256;

export type JobOutcome = { readonly kind: "finished"; readonly result: string } | { readonly kind: "still-running" };

/**
 * Matches the Manager's JobRemoved signals to submitted jobs by object path. A job can finish before the
 * caller has read the reply that names it, so recent results are kept and checked first.
 */
export class JobTracker {
  readonly #recent = new Map<string, string>();
  readonly #waiters = new Map<string, (result: string) => void>();

  constructor(private readonly clock: Clock) {}

  /** Feed every JobRemoved(id, job, unit, result) here. */
  removed(jobPath: string, result: string): void {
    const waiter = this.#waiters.get(jobPath);
    if (waiter) {
      this.#waiters.delete(jobPath);
      waiter(result);
      return;
    }
    this.#recent.set(jobPath, result);
    if (this.#recent.size > RECENT_LIMIT) {
      const oldest = this.#recent.keys().next();
      if (!oldest.done) this.#recent.delete(oldest.value);
    }
  }

  /**
   * Resolves with the job's result, with "still-running" after `timeoutMs` without one, or rejects with the
   * signal's reason.
   */
  wait(jobPath: string, timeoutMs: number, signal?: AbortSignal): Promise<JobOutcome> {
    const known = this.#recent.get(jobPath);
    if (known !== undefined) {
      this.#recent.delete(jobPath);
      return Promise.resolve({ kind: "finished", result: known });
    }
    return new Promise<JobOutcome>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      // Ends the timer once a result or the caller's abort settled the wait.
      const timer = new AbortController();
      const done = () => {
        timer.abort();
        signal?.removeEventListener("abort", onAbort);
        if (this.#waiters.get(jobPath) === onResult) this.#waiters.delete(jobPath);
      };
      const onResult = (result: string) => {
        done();
        resolve({ kind: "finished", result });
      };
      const onAbort = () => {
        done();
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#waiters.set(jobPath, onResult);
      this.clock.sleep(timeoutMs, timer.signal).then(
        () => {
          done();
          resolve({ kind: "still-running" });
        },
        () => {
          // Aborted by done(): the wait already settled.
        },
      );
    });
  }
}
