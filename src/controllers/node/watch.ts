import type { Clock } from "../../clock/index.ts";
import { Controller } from "../../kube/controller.ts";
import type { ControllerMetrics } from "../../kube/controller-metrics.ts";
import { enqueueObject, type EventHandler } from "../../kube/handler.ts";
import type { Predicate } from "../../kube/predicate.ts";
import type { Reconcile } from "../../kube/reconcile.ts";
import type { Source } from "../../kube/source.ts";
import type { KubeObject, Selectors } from "../../kube/types.ts";
import type { Logger } from "../../log/types.ts";

export const controllerName = "node";
export const restartAnnotation = "worker.gardener.cloud/restart-systemd-services";
export const hostnameLabel = "kubernetes.io/hostname";
/** controllerutils.DefaultReconciliationTimeout */
export const reconcileTimeoutMs = 3 * 60 * 1000;
export const maxConcurrentReconciles = 1;

/** The Node this agent runs on, as known at start-up (`nodeName` undefined: not registered yet). */
export interface NodeIdentity {
  readonly hostName: string;
  readonly nodeName: string | undefined;
}

/**
 * Selectors of the one Node informer every Node-watching controller shares (bootstrap-and-config.md
 * §7.4): by name when the node name is known, else by the hostname label.
 */
export function nodeSelectors(id: NodeIdentity): Selectors {
  return id.nodeName !== undefined && id.nodeName !== ""
    ? { fieldSelector: `metadata.name=${id.nodeName}` }
    : { labelSelector: `${hostnameLabel}=${id.hostName}` };
}

/** Passes only Nodes labelled `kubernetes.io/hostname=<hostName>`, for every event kind (controllers.md §0). */
export function nodePredicate(hostName: string): Predicate<KubeObject> {
  const mine = (o: KubeObject) => o.metadata.labels?.[hostnameLabel] === hostName;
  return { create: mine, update: (_old, n) => mine(n), delete: mine, generic: mine };
}

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

/** The object's own key for every event; an update enqueues the new object's once (src/kube/handler.ts). */
export const enqueueOwnKey: () => EventHandler<KubeObject> = enqueueObject;

/** One worker, 3-minute deadline, the Node source behind nodePredicate and the annotation predicate. */
export function newNodeController(opts: {
  readonly reconcile: Reconcile;
  readonly source: Source<KubeObject>;
  readonly hostName: string;
  readonly clock: Clock;
  readonly log: Logger;
  readonly metrics?: ControllerMetrics;
}): Controller {
  const c = new Controller({
    name: controllerName,
    reconcile: opts.reconcile,
    workers: maxConcurrentReconciles,
    timeoutMs: reconcileTimeoutMs,
    log: opts.log,
    clock: opts.clock,
    ...(opts.metrics !== undefined ? { metrics: opts.metrics } : {}),
  });
  c.watch(opts.source, enqueueOwnKey(), nodePredicate(opts.hostName), restartAnnotationPredicate);
  return c;
}
