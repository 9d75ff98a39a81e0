/**
 * The one way the integration suites wait for something that happens on its own time (a controller,
 * an agent process, an informer): look again every few milliseconds until it holds, and fail with
 * what was awaited and what was seen last. Ordering between test steps is never a fixed sleep.
 */

export interface EventuallyOptions {
  /** How long to keep looking (wall clock); default 10 s. */
  readonly timeoutMs?: number;
  /** The pause between looks; default 10 ms. 0 yields one event-loop turn (for FakeClock-driven code). */
  readonly intervalMs?: number;
}

/** Thrown when the awaited thing did not come in time; its message names it and the last observation. */
export class EventuallyTimeout extends Error {
  override readonly name = "EventuallyTimeout";
  constructor(
    readonly what: string,
    readonly timeoutMs: number,
    readonly lastObserved: unknown,
  ) {
    super(`timed out after ${timeoutMs} ms waiting for ${what}; last observed: ${describe(lastObserved)}`);
  }
}

type Missing = undefined | null | false;

/**
 * Calls `observe` until it returns something other than undefined, null or false, and returns that.
 * With `until`, calls it until `until(value)` holds, and returns the accepted value (so the failure can
 * show the last value, e.g. a count, rather than just `false`). An error thrown by `observe` fails at once.
 */
export async function eventually<T>(
  what: string,
  observe: () => T | Promise<T>,
  opts: EventuallyOptions & { readonly until: (value: T) => boolean },
): Promise<T>;
export async function eventually<T>(what: string, observe: () => T | Missing | Promise<T | Missing>, opts?: EventuallyOptions): Promise<T>;
export async function eventually<T>(
  what: string,
  observe: () => T | Promise<T>,
  opts: EventuallyOptions & { readonly until?: (value: T) => boolean } = {},
): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const intervalMs = opts.intervalMs ?? 10;
  const accept = opts.until ?? ((v: T) => v !== undefined && v !== null && v !== false);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await observe();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new EventuallyTimeout(what, timeoutMs, value);
    if (intervalMs === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    else await Bun.sleep(intervalMs);
  }
}

/** A short, one-line rendering of an observed value for the failure message. */
function describe(value: unknown): string {
  const text = typeof value === "string" ? JSON.stringify(value) : Bun.inspect(value, { depth: 3 }).replace(/\s+/g, " ");
  return text.length > 400 ? `${text.slice(0, 400)}…` : text;
}
