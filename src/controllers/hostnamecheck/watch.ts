import type { Clock } from "../../clock/index.ts";
import { type Controller, newController } from "../../kube/index.ts";
import type { ObjectKey, Reconcile } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";

const controllerName = "hostname-check";
/** How often the hostname is compared with the start-up value (controllers.md §8). */
export const checkIntervalMs = 30_000;
/** Nothing is watched: one empty key is enqueued at start and requeues itself. */
const singletonKey: ObjectKey = { namespace: "", name: "" };

/** One worker, no reconcile timeout (upstream sets none for this controller). */
export function newHostnameCheckController(opts: {
  readonly reconcile: Reconcile;
  readonly clock: Clock;
  readonly log: Logger;
  readonly onRestartRequested: (why: string) => void;
}): Controller {
  return newController({
    name: controllerName,
    reconcile: opts.reconcile,
    workers: 1,
    log: opts.log,
    clock: opts.clock,
    onRestartRequested: opts.onRestartRequested,
    startKeys: [singletonKey],
  });
}
