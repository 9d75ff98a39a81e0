/** Time source injected everywhere a timer or a timestamp is needed, so tests can step time. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Resolves after `ms`; rejects with the signal's reason when aborted. Handles delays beyond 2^31-1 ms. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** setTimeout silently fires at once for delays above this (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

export const realClock: Clock = {
  now: () => Date.now(),
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const deadline = Date.now() + Math.max(0, ms);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      const arm = () => {
        const left = deadline - Date.now();
        if (left <= 0) {
          signal?.removeEventListener("abort", onAbort);
          return resolve();
        }
        timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      arm();
    });
  },
};
