import type { Clock } from "../../clock/index.ts";
import { and, type Controller, newController, only, type Predicate } from "../../kube/index.ts";
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
  const c = newController({
    name: controllerName,
    reconcile: opts.reconcile,
    workers: maxConcurrentReconciles,
    timeoutMs: reconcileTimeoutMs(opts.leaseDurationSeconds ?? leaseDurationSeconds),
    log: opts.log,
    clock: opts.clock,
  });
  c.watch(opts.source, enqueueOwnKey(), leasePredicate(opts.hostName));
  return c;
}
