import type { Clock } from "../../clock/index.ts";
import { type Controller, newController } from "../../kube/index.ts";
import type { KubeObject, Predicate, Reconcile, Source } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import { enqueueOwnKey, nodePredicate } from "../shared/index.ts";

const controllerName = "node";
export const restartAnnotation = "worker.gardener.cloud/restart-systemd-services";
/** controllerutils.DefaultReconciliationTimeout */
const reconcileTimeoutMs = 3 * 60 * 1000;
const maxConcurrentReconciles = 1;

const annotationOf = (o: KubeObject): string => o.metadata.annotations?.[restartAnnotation] ?? "";

/**
 * The restart annotation (controllers.md §4): Create when non-empty; Update when changed and
 * non-empty (removing it never triggers); Delete and Generic never.
 */
export const restartAnnotationPredicate: Predicate<KubeObject> = {
  create: (o) => annotationOf(o) !== "",
  update: (oldObj, newObj) => annotationOf(newObj) !== "" && annotationOf(oldObj) !== annotationOf(newObj),
  delete: () => false,
  generic: () => false,
};

/** One worker, 3-minute deadline, the Node source behind nodePredicate and the annotation predicate. */
export function newNodeController(opts: {
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
    timeoutMs: reconcileTimeoutMs,
    log: opts.log,
    clock: opts.clock,
  });
  c.watch(opts.source, enqueueOwnKey(), nodePredicate(opts.hostName), restartAnnotationPredicate);
  return c;
}
