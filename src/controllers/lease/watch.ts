import type { Clock } from "../../clock/index.ts";
import { and, type Controller, defaultControllerRateLimiter, newController, only, type Predicate } from "../../kube/index.ts";
import type { KubeObject, Reconcile, Source } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import { enqueueOwnKey, nodePredicate } from "../shared/index.ts";

const controllerName = "lease";
export const leaseNamespace = "kube-system";
export const leaseDurationSeconds = 40;
const maxConcurrentReconciles = 1;

/** Renew every quarter of the lease duration (10 s for 40 s). */
export const renewIntervalMs = (durationSeconds: number): number => (durationSeconds * 1000) / 4;
/** The reconcile deadline is the lease duration: a renewal slower than that is worthless. */
export const reconcileTimeoutMs = (durationSeconds: number): number => durationSeconds * 1000;

/*
 * The margin before the Lease expires (40 s lease, renewal due every 10 s; T = the last renewal):
 * - One Lease request gives up after half the renew interval (5 s). A renewal whose PUT hangs fails at
 *   T+15 and its retry follows 5 ms later (first failure), so one hung request costs a 15 s gap. Even if
 *   every request hangs, a new attempt starts about every 5 s (T+10, T+15, … T+35): five more before
 *   the lease runs out at T+40, still two when every retry is a GET and a PUT that both take up to 5 s.
 * - Retries back off by at most a quarter of the renew interval (2.5 s), so the first attempt after
 *   the API server recovers comes at most 2.5 s later. A storm of S seconds of errors that begins just
 *   before a renewal is due leaves a gap of at most 10 s + S + 2.5 s: 37.5 s for 25 s of 500s, inside
 *   the 40 s lease. A cap of the full renew interval would allow 45 s there, and no cap at all let the
 *   wait grow to 20 s. At ≤ 0.4 requests/s while failing this is no more load than kubelet's own lease
 *   controller (up to 5 tries every 10 s).
 */
/** Deadline of one Lease request (GET, create or PUT): 5 s for a 40 s lease. */
export const requestTimeoutMs = (durationSeconds: number): number => renewIntervalMs(durationSeconds) / 2;
/** Cap of the retry backoff: 2.5 s for a 40 s lease (the runtime's default cap is 1000 s). */
export const retryBackoffCapMs = (durationSeconds: number): number => renewIntervalMs(durationSeconds) / 4;

/**
 * Own Node, Create events only (the informer's initial replay starts the loop once per agent
 * start; periodicity comes from RequeueAfter alone, Node updates never trigger a renewal).
 */
export function leasePredicate(hostName: string): Predicate<KubeObject> {
  return and(only<KubeObject>("create"), nodePredicate(hostName));
}

export function newLeaseController(opts: {
  readonly reconcile: Reconcile;
  readonly source: Source<KubeObject>;
  readonly hostName: string;
  readonly leaseDurationSeconds?: number;
  readonly clock: Clock;
  readonly log: Logger;
}): Controller {
  const duration = opts.leaseDurationSeconds ?? leaseDurationSeconds;
  const c = newController({
    name: controllerName,
    reconcile: opts.reconcile,
    workers: maxConcurrentReconciles,
    timeoutMs: reconcileTimeoutMs(duration),
    rateLimiter: defaultControllerRateLimiter(opts.clock, { maxDelayMs: retryBackoffCapMs(duration) }),
    log: opts.log,
    clock: opts.clock,
  });
  c.watch(opts.source, enqueueOwnKey(), leasePredicate(opts.hostName));
  return c;
}
