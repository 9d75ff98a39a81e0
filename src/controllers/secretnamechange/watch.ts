import type { Clock } from "../../clock/index.ts";
import { and, type Controller, newController, type Predicate } from "../../kube/index.ts";
import type { KubeObject, Reconcile, Source } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import { enqueueOwnKey, nodePredicate } from "../shared/index.ts";

const controllerName = "secret-name-change";
/** The Node label naming the OSC Secret this node should follow. */
export const secretNameLabel = "worker.gardener.cloud/gardener-node-agent-secret-name";
/** controllerutils.DefaultReconciliationTimeout */
const reconcileTimeoutMs = 3 * 60 * 1000;

const labelOf = (o: KubeObject): string => o.metadata.labels?.[secretNameLabel] ?? "";

/**
 * controllers.md §9: Create passes when the label is set; Update when its value changed (set,
 * changed or removed); Delete and Generic never.
 */
export const secretNameLabelPredicate: Predicate<KubeObject> = {
  create: (o) => labelOf(o) !== "",
  update: (oldObj, newObj) => labelOf(oldObj) !== labelOf(newObj),
  delete: () => false,
  generic: () => false,
};

/** One worker, 3-minute deadline, no periodic requeue; the own Node behind both predicates. */
export function newSecretNameChangeController(opts: {
  readonly reconcile: Reconcile;
  readonly source: Source<KubeObject>;
  readonly hostName: string;
  readonly clock: Clock;
  readonly log: Logger;
  readonly onRestartRequested: (why: string) => void;
}): Controller {
  const c = newController({
    name: controllerName,
    reconcile: opts.reconcile,
    workers: 1,
    timeoutMs: reconcileTimeoutMs,
    log: opts.log,
    clock: opts.clock,
    onRestartRequested: opts.onRestartRequested,
  });
  c.watch(opts.source, enqueueOwnKey(), and(nodePredicate(opts.hostName), secretNameLabelPredicate));
  return c;
}
