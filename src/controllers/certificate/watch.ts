import type { Clock } from "../../clock/index.ts";
import { type Controller, newController } from "../../kube/index.ts";
import type { ObjectKey, Reconcile } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";

const controllerName = "certificate";
/** controllerutils.DefaultReconciliationTimeout; it also cuts the CSR wait (15 min) short, retried with backoff. */
const reconcileTimeoutMs = 3 * 60 * 1000;
/** Nothing is watched: one empty key is enqueued once at start (controllerutils.EnqueueOnce). */
const singletonKey: ObjectKey = { namespace: "", name: "" };

/** One worker, 3-minute deadline, the single start key. */
export function newCertificateController(opts: {
  readonly reconcile: Reconcile;
  readonly clock: Clock;
  readonly log: Logger;
  readonly onRestartRequested: (why: string) => void;
}): Controller {
  return newController({
    name: controllerName,
    reconcile: opts.reconcile,
    workers: 1,
    timeoutMs: reconcileTimeoutMs,
    log: opts.log,
    clock: opts.clock,
    onRestartRequested: opts.onRestartRequested,
    startKeys: [singletonKey],
  });
}
