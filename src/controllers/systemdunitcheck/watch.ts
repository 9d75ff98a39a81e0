import type { Clock } from "../../clock/index.ts";
import { and, type Controller, defaultControllerRateLimiter, newController, only, type Predicate } from "../../kube/index.ts";
import type { KubeObject, Reconcile, Source } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import { enqueueOwnKey, nodePredicate } from "../shared/index.ts";

export const controllerName = "systemd-unit-check";
const maxConcurrentReconciles = 1;

/**
 * Own Node, Create events only (controllers.md §10): the informer's initial replay starts the loop
 * once per agent start; afterwards RequeueAfter = syncPeriod drives it (and the OSC controller's
 * request after an apply, see `newSystemdUnitCheckController`), so the condition patches this
 * controller writes never wake it up again.
 */
export function systemdUnitCheckPredicate(hostName: string): Predicate<KubeObject> {
  return and(only<KubeObject>("create"), nodePredicate(hostName));
}

/**
 * One worker; the reconcile deadline and the error backoff cap are both the sync period. `checkNow`:
 * the OSC controller's requests after an apply (shared/unit-check-now.ts), a check at once; a request
 * during a check runs one more after it (the queue keeps the key dirty), so the newer units are judged.
 */
export function newSystemdUnitCheckController(opts: {
  readonly reconcile: Reconcile;
  readonly source: Source<KubeObject>;
  readonly checkNow?: Source<KubeObject> | undefined;
  readonly hostName: string;
  readonly syncPeriodMs: number;
  readonly clock: Clock;
  readonly log: Logger;
}): Controller {
  const c = newController({
    name: controllerName,
    reconcile: opts.reconcile,
    workers: maxConcurrentReconciles,
    timeoutMs: opts.syncPeriodMs,
    log: opts.log,
    clock: opts.clock,
    rateLimiter: defaultControllerRateLimiter(opts.clock, { maxDelayMs: opts.syncPeriodMs }),
  });
  c.watch(opts.source, enqueueOwnKey(), systemdUnitCheckPredicate(opts.hostName));
  if (opts.checkNow !== undefined) c.watch(opts.checkNow, enqueueOwnKey(), only<KubeObject>("generic"));
  return c;
}
