import type { Clock } from "../../clock/index.ts";
import { type Controller, newController } from "../../kube/index.ts";
import type { KubeObject, Predicate, Reconcile, Source } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import { enqueueOwnKey, nodePredicate } from "../shared/index.ts";

export const controllerName = "health-check";
const maxConcurrentReconciles = 1;
/** Look again this long after a pass without errors (controllers.md §7). */
export const checkIntervalMs = 30_000;

/** Own Node, every event kind: each Node status update also runs the checks. */
export function healthCheckPredicate(hostName: string): Predicate<KubeObject> {
  return nodePredicate(hostName);
}

/** One worker and no reconcile deadline (upstream sets none; the probes carry their own timeouts). */
export function newHealthCheckController(opts: {
  readonly reconcile: Reconcile;
  readonly source: Source<KubeObject>;
  readonly hostName: string;
  readonly clock: Clock;
  readonly log: Logger;
}): Controller {
  const c = newController({
    name: controllerName,
    reconcile: opts.reconcile,
    workers: maxConcurrentReconciles,
    log: opts.log,
    clock: opts.clock,
  });
  c.watch(opts.source, enqueueOwnKey(), healthCheckPredicate(opts.hostName));
  return c;
}
