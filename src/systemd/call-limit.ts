/**
 * At most `limit` holders at a time; the others wait in arrival order. A waiter whose signal aborts
 * leaves the line with the signal's reason and takes no slot.
 */
export class CallLimit {
  #active = 0;
  readonly #waiting: Array<{ readonly grant: () => void }> = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`call limit must be a positive integer, got ${limit}`);
  }

  /** Holders right now (for tests and metrics). */
  get active(): number {
    return this.#active;
  }

  /** Runs `fn` once a slot is free and frees it when `fn` settles. */
  async run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.#acquire(signal);
    try {
      return await fn();
    } finally {
      this.#release();
    }
  }

  #acquire(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    if (this.#active < this.limit) {
      this.#active++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter = {
        grant: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        const i = this.#waiting.indexOf(waiter);
        if (i >= 0) this.#waiting.splice(i, 1);
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#waiting.push(waiter);
    });
  }

  #release(): void {
    const next = this.#waiting.shift();
    // The slot passes straight to the next waiter, so `active` stays the same.
    if (next !== undefined) next.grant();
    else this.#active--;
  }
}
