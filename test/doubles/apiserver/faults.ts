/** Fault injection levers: failing, slow or hung requests, dropped or stalled watches, refused connections. */
import type { WatchHub } from "./watch.ts";
import type { TlsFront } from "./front.ts";
import type { SimApiError } from "./status.ts";
import { serverError, tooManyRequests } from "./status.ts";

/** Which requests a fault applies to; every given field must match. */
export interface RequestMatch {
  /** kube verb: get, list, watch, create, update, patch, delete. */
  verb?: string;
  /** plural resource name, e.g. "leases". */
  resource?: string;
  /** substring of the URL path, or a RegExp tested against it. */
  path?: string | RegExp;
}

export interface FailOptions extends RequestMatch {
  /** 429 (default), 500, 503 or 504. */
  status?: number;
  /** Retry-After for 429 (default 1). */
  retryAfterSeconds?: number;
}

export interface HangOptions extends RequestMatch {
  /**
   * How long a hung request is held before the server's own request timeout answers it with 504 (nothing
   * is stored); default: until the client goes away, `clear()` or `stop()`.
   */
  ms?: number;
}

interface HangRule {
  remaining: number;
  ms: number | undefined;
  match: RequestMatch;
}

interface FailRule {
  remaining: number;
  status: number;
  retryAfterSeconds: number;
  match: RequestMatch;
}

export interface MatchTarget {
  readonly verb: string;
  readonly resource: string;
  readonly path: string;
}

function matches(m: RequestMatch, t: MatchTarget): boolean {
  if (m.verb !== undefined && m.verb !== t.verb) return false;
  if (m.resource !== undefined && m.resource !== t.resource) return false;
  if (m.path !== undefined) return typeof m.path === "string" ? t.path.includes(m.path) : m.path.test(t.path);
  return true;
}

export class Faults {
  private rules: FailRule[] = [];
  private hangRules: HangRule[] = [];
  /** Ends every held request (clear, stop). */
  private releaseHeld = new AbortController();
  private holding = 0;
  private latency: { ms: number; match: RequestMatch } | undefined;
  private holds: { match: RequestMatch; release: () => void; released: Promise<void> }[] = [];
  private reopenTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly hub: WatchHub,
    private readonly front: TlsFront,
  ) {}

  /** The next `count` matching requests fail with `status` (default 429 with Retry-After). */
  failNext(count: number, opts: FailOptions = {}): void {
    const { status = 429, retryAfterSeconds = 1, ...match } = opts;
    this.rules.push({ remaining: count, status, retryAfterSeconds, match });
  }

  /**
   * The next `count` matching requests hang: no answer (and no effect) until the client gives up, `ms`
   * pass (then 504 Timeout, as kube-apiserver's request timeout answers), `clear()` or `stop()`.
   */
  hangNext(count: number, opts: HangOptions = {}): void {
    const { ms, ...match } = opts;
    this.hangRules.push({ remaining: count, ms, match });
  }

  /** Requests hanging right now (a client that gives up ends its request's hang). */
  get held(): number {
    return this.holding;
  }

  /**
   * Holds this request if a hang rule matches (consuming one count): resolves with the 504 to answer once
   * the hang ends, or undefined at once when no rule matches. `clientGone` aborts when the client hangs up.
   */
  async hangFor(t: MatchTarget, clientGone: AbortSignal): Promise<SimApiError | undefined> {
    const rule = this.hangRules.find((r) => r.remaining > 0 && matches(r.match, t));
    if (rule === undefined) return undefined;
    rule.remaining--;
    this.hangRules = this.hangRules.filter((r) => r.remaining > 0);
    const ends = [clientGone, this.releaseHeld.signal];
    if (rule.ms !== undefined) ends.push(AbortSignal.timeout(rule.ms));
    const end = AbortSignal.any(ends);
    this.holding++;
    try {
      if (!end.aborted) await new Promise<void>((resolve) => end.addEventListener("abort", () => resolve(), { once: true }));
    } finally {
      this.holding--;
    }
    return serverError(504, "request did not complete within the allotted timeout");
  }

  /** Every matching request waits `ms` before it is handled; 0 turns it off. */
  setLatency(ms: number, match: RequestMatch = {}): void {
    this.latency = ms > 0 ? { ms, match } : undefined;
  }

  /**
   * Matching requests wait (after authentication, before they are served) until the returned function is
   * called, as a request stuck in a slow apiserver does; nothing moves on a timer.
   */
  hold(match: RequestMatch = {}): () => void {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const h = { match, release, released };
    this.holds.push(h);
    return () => {
      this.holds = this.holds.filter((x) => x !== h);
      release();
    };
  }

  /** Resolves once no hold matches this request any more. */
  async heldUntilReleased(t: MatchTarget): Promise<void> {
    for (let h = this.holds.find((x) => matches(x.match, t)); h !== undefined; h = this.holds.find((x) => matches(x.match, t))) {
      await h.released;
    }
  }

  /** Forgets pending failures, hangs, holds and latency, ends held requests and a stall, accepts connections again. */
  async clear(): Promise<void> {
    this.rules = [];
    this.hangRules = [];
    this.endHeld();
    this.latency = undefined;
    this.releaseHolds();
    this.hub.unstall();
    await this.acceptConnections();
  }

  /** Ends all open watches now (abrupt = connection reset instead of a clean end of stream). */
  dropWatches(abrupt = false): number {
    return this.hub.dropAll(abrupt);
  }

  /** Open watches stop receiving events (connections stay open) for `ms`; then the backlog arrives. */
  stallWatches(ms: number): void {
    this.hub.stall(ms);
  }

  /** Stops listening (open connections are cut); after `ms`, if given, listens again on the same port. */
  async refuseConnections(ms?: number): Promise<void> {
    clearTimeout(this.reopenTimer);
    await this.front.close();
    if (ms !== undefined)
      this.reopenTimer = setTimeout(() => {
        this.acceptConnections().catch((err: unknown) => {
          // no caller to hand this to: keep it for the test to see, acceptConnections() retries and throws
          this.reopenFailure = err;
        });
      }, ms);
  }

  /** Why the timed re-listen after refuseConnections(ms) failed (e.g. the port was taken meanwhile). */
  reopenFailure: unknown;

  /** Listens again on the same port (no-op when already listening). */
  async acceptConnections(): Promise<void> {
    clearTimeout(this.reopenTimer);
    if (!this.front.listening) await this.front.listen();
    this.reopenFailure = undefined;
  }

  latencyFor(t: MatchTarget): number {
    return this.latency !== undefined && matches(this.latency.match, t) ? this.latency.ms : 0;
  }

  /** The injected failure for this request, consuming one count of the first matching rule. */
  failureFor(t: MatchTarget): SimApiError | undefined {
    const rule = this.rules.find((r) => r.remaining > 0 && matches(r.match, t));
    if (rule === undefined) return undefined;
    rule.remaining--;
    this.rules = this.rules.filter((r) => r.remaining > 0);
    return rule.status === 429 ? tooManyRequests(rule.retryAfterSeconds) : serverError(rule.status, "injected fault");
  }

  private releaseHolds(): void {
    const holds = this.holds;
    this.holds = [];
    for (const h of holds) h.release();
  }

  stop(): void {
    this.releaseHolds();
    clearTimeout(this.reopenTimer);
    this.endHeld();
  }

  private endHeld(): void {
    this.releaseHeld.abort();
    this.releaseHeld = new AbortController();
  }
}
