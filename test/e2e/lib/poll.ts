/** Outcome of one poll attempt: done with a value, or not yet with the reason (shown when the deadline passes). */
export type PollAttempt<T> = { readonly done: true; readonly value: T } | { readonly done: false; readonly reason: string };

class PollTimeoutError extends Error {
  override readonly name = "PollTimeoutError";
  constructor(
    readonly what: string,
    readonly lastReason: string,
    readonly waitedMs: number,
  ) {
    super(`${what}: not reached after ${Math.round(waitedMs / 1000)} s (last: ${lastReason})`);
  }
}

export interface PollOptions {
  readonly what: string;
  readonly timeoutMs: number;
  readonly intervalMs?: number;
  readonly signal: AbortSignal;
}

export const done = <T>(value: T): PollAttempt<T> => ({ done: true, value });
export const notYet = (reason: string): PollAttempt<never> => ({ done: false, reason });

const isTimeout = (reason: unknown): boolean => reason instanceof DOMException && reason.name === "TimeoutError";

/**
 * Calls `attempt` until it reports done or the deadline passes (own timeout or a step deadline on `signal`). A thrown
 * error counts as "not yet" (the guest or the simulator may simply not be up); its message becomes the reason.
 * Running out of time throws PollTimeoutError with the last reason; any other abort rethrows the abort reason.
 */
export async function pollUntil<T>(attempt: (signal: AbortSignal) => Promise<PollAttempt<T>>, opts: PollOptions): Promise<T> {
  const start = performance.now();
  const deadline = AbortSignal.any([opts.signal, AbortSignal.timeout(opts.timeoutMs)]);
  let lastReason = "no attempt finished";
  const giveUp = (): never => {
    if (opts.signal.aborted && !isTimeout(opts.signal.reason)) throw opts.signal.reason;
    throw new PollTimeoutError(opts.what, lastReason, performance.now() - start);
  };
  for (;;) {
    if (deadline.aborted) giveUp();
    try {
      const result = await attempt(deadline);
      if (result.done) return result.value;
      lastReason = result.reason;
    } catch (err) {
      if (!deadline.aborted) lastReason = err instanceof Error ? err.message : String(err);
    }
    if (deadline.aborted) giveUp();
    await Bun.sleep(opts.intervalMs ?? 1000);
  }
}
