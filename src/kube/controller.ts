import type { Clock } from "../clock/index.ts";
import type { Logger } from "../log/index.ts";
import type { ControllerStats, ReconcileOutcome } from "./controller-metrics.ts";
import { StatsRecorder } from "./controller-metrics.ts";
import type { Enqueuer, EventHandler } from "./handler.ts";
import type { Predicate } from "./predicate.ts";
import { and } from "./predicate.ts";
import { defaultControllerRateLimiter, type RateLimiter } from "./rate-limiter.ts";
import { keyString, RestartRequested, TerminalError, type ObjectKey, type Reconcile, type Result } from "./reconcile.ts";
import type { Source } from "./source.ts";
import { WorkQueue } from "./queue.ts";

export interface ControllerOptions {
  /** Upstream controller name (`lease`, `token`, …); it labels logs and metrics. */
  name: string;
  reconcile: Reconcile;
  /** Parallel workers (MaxConcurrentReconciles), default 1. A key never runs on two at once. */
  workers?: number | undefined;
  /** Per-reconcile deadline; omitted or 0 → none (health-check, hostname-check). */
  timeoutMs?: number | undefined;
  log: Logger;
  clock: Clock;
  /** Default: max(5 ms × 2^(n-1) capped 1000 s, 10 qps / burst 100). */
  rateLimiter?: RateLimiter | undefined;
  /** A reconcile threw a TerminalError: not retried; emit an event here if wanted. */
  onTerminal?: ((key: ObjectKey, err: TerminalError) => void) | undefined;
  /** A reconcile threw RestartRequested: the controller stops taking work; the wiring stops the process. */
  onRestartRequested?: ((why: string) => void) | undefined;
}

/** Finds a TerminalError or RestartRequested in an error or its `cause` chain (errors.As). */
function findInChain<E extends Error>(err: unknown, cls: abstract new (...a: never[]) => E): E | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 16; e = e.cause, depth++) {
    if (e instanceof cls) return e;
  }
  return undefined;
}

const parseKey = (k: string): ObjectKey => {
  const i = k.indexOf("/");
  return i < 0 ? { namespace: "", name: k } : { namespace: k.slice(0, i), name: k.slice(i + 1) };
};

/**
 * The controller runtime: a work queue, its workers and the watches feeding it. The worker loop —
 * not the reconciler — owns try/catch, the per-reconcile timeout, the reconcileId on the logger,
 * backoff and metrics (controller-runtime's reconcileHandler rules, C2–C4).
 */
export class Controller implements Enqueuer {
  readonly name: string;
  readonly queue: WorkQueue;
  readonly #opts: ControllerOptions;
  readonly #workers: number;
  readonly #log: Logger;
  readonly #stats = new StatsRecorder();
  readonly #unsubscribe: Array<() => void> = [];
  #started = false;

  constructor(opts: ControllerOptions) {
    this.name = opts.name;
    this.#opts = opts;
    this.#workers = Math.max(1, opts.workers ?? 1);
    this.#log = opts.log.child({ controller: opts.name });
    this.queue = new WorkQueue(opts.clock, opts.rateLimiter ?? defaultControllerRateLimiter(opts.clock));
  }

  /** Enqueue a key directly (e.g. the token controller's start-up keys). */
  add(key: ObjectKey): void {
    this.queue.add(keyString(key));
  }

  /** Feed the queue from a source: events pass the predicates (all must agree), then the handler maps them to keys. */
  watch<T>(source: Source<T>, handler: EventHandler<T>, ...predicates: Predicate<T>[]): void {
    const p = and(...predicates);
    this.#unsubscribe.push(
      source.subscribe({
        create: (o) => p.create(o) && handler.create(o, this),
        update: (a, b) => p.update(a, b) && handler.update(a, b, this),
        delete: (o) => p.delete(o) && handler.delete(o, this),
        generic: (o) => p.generic(o) && handler.generic(o, this),
      }),
    );
  }

  /**
   * Run the workers until `signal` aborts or a reconcile requests a restart. Resolves once every
   * in-flight reconcile has returned (their signals are aborted on shutdown).
   */
  async start(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new Error(`controller ${this.name} started twice`);
    this.#started = true;
    const stop = () => this.queue.shutdown();
    signal.addEventListener("abort", stop, { once: true });
    if (signal.aborted) stop();
    this.#log.info("Starting workers", { workerCount: this.#workers });
    try {
      await Promise.all(Array.from({ length: this.#workers }, () => this.#worker(signal)));
    } finally {
      signal.removeEventListener("abort", stop);
      for (const u of this.#unsubscribe.splice(0)) u();
      this.queue.shutdown();
      this.#log.info("All workers finished");
    }
  }

  stats(): ControllerStats {
    const s = this.#stats;
    return {
      name: this.name,
      workers: this.#workers,
      activeWorkers: s.active,
      reconcileTotal: { ...s.total },
      reconcileErrors: s.errors,
      terminalErrors: s.terminal,
      retries: s.retries,
      reconcileTimeSeconds: { sum: s.sum, count: s.count, buckets: [...s.buckets] },
      queueDepth: this.queue.len() + this.queue.delayedLen(),
    };
  }

  async #worker(shutdown: AbortSignal): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      this.#setActive(+1);
      try {
        await this.#reconcileOne(key, shutdown);
      } finally {
        this.#setActive(-1);
        this.queue.done(key);
      }
    }
  }

  #setActive(delta: number): void {
    this.#stats.active += delta;
  }

  async #reconcileOne(k: string, shutdown: AbortSignal): Promise<void> {
    const key = parseKey(k);
    const reconcileId = crypto.randomUUID();
    const log = this.#log.child({ object: k, namespace: key.namespace, name: key.name, reconcileID: reconcileId });
    const timeoutMs = this.#opts.timeoutMs ?? 0;
    const signal = timeoutMs > 0 ? AbortSignal.any([shutdown, AbortSignal.timeout(timeoutMs)]) : shutdown;
    const started = performance.now();
    let outcome: ReconcileOutcome = "success";
    let terminal = false;
    try {
      log.debug("Reconciling");
      const result: Result = await this.#opts.reconcile(key, signal);
      const after = result.requeueAfterMs ?? 0;
      // Success or a requested look later: either way the failure history starts over (C2).
      this.queue.forget(k);
      if (after > 0) {
        outcome = "requeue_after";
        this.queue.addAfter(k, after);
      }
    } catch (err) {
      outcome = "error";
      const restart = findInChain(err, RestartRequested);
      const term = findInChain(err, TerminalError);
      if (restart !== undefined) {
        outcome = "success"; // a requested restart is a decision, not a failure
        log.info("Restart requested", { why: restart.why });
        this.queue.forget(k);
        this.queue.shutdown(); // stop taking work; in-flight reconciles on other workers finish
        this.#opts.onRestartRequested?.(restart.why);
      } else if (term !== undefined) {
        terminal = true;
        log.error("Reconciler error", { err, terminal: true });
        this.queue.forget(k);
        this.#opts.onTerminal?.(key, term);
      } else if (shutdown.aborted) {
        log.debug("Reconcile aborted by shutdown", { err });
      } else {
        const timedOut = timeoutMs > 0 && signal.aborted;
        log.error("Reconciler error", timedOut ? { err, timeout: `${timeoutMs}ms` } : { err });
        this.#stats.retries++;
        this.queue.addRateLimited(k);
      }
    } finally {
      const seconds = (performance.now() - started) / 1000;
      this.#stats.observe(outcome, seconds, terminal);
    }
  }
}

/** ControllerOptions plus the keys to enqueue once at construction. */
export interface NewControllerOptions extends ControllerOptions {
  /** controllerutils.EnqueueOnce: the singleton key, or the token controller's one key per Secret. */
  readonly startKeys?: readonly ObjectKey[] | undefined;
}

/**
 * A Controller as a watch.ts describes it (name, workers, deadline, backoff, start keys) with what
 * the wiring hands over (reconcile, clock, log, restart callback). Optional options may be passed
 * as `undefined`, so a watch.ts forwards its own optional fields as they are; the caller adds the
 * watches with `watch`.
 */
export function newController(opts: NewControllerOptions): Controller {
  const { startKeys, ...options } = opts;
  const c = new Controller(options);
  for (const key of startKeys ?? []) c.add(key);
  return c;
}
