import type { Clock } from "../../clock/index.ts";
import { type Controller, newController } from "../../kube/index.ts";
import type { KubeObject, Predicate, Reconcile, Source } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import { enqueueOwnKey, nodePredicate } from "../shared/index.ts";
import { nodeAddresses, nodeReady } from "./node-status.ts";

export const controllerName = "health-check";
const maxConcurrentReconciles = 1;
/** Look again this long after a pass without errors (controllers.md §7). */
export const checkIntervalMs = 30_000;

/**
 * Own Node; creates, deletes and generic events always run the checks, an update only when it changes
 * what the checkers read of the Node: its readiness (kubelet toggles) or its InternalIP/ExternalIP
 * (address recovery). The probes themselves do not depend on the Node, and the 30 s requeue keeps them
 * running: the agent's own Node writes (labels, annotations, the OSC condition during an apply) no
 * longer spawn `ctr version` and a kubelet GET each, in the middle of the apply they report on.
 */
export function healthCheckPredicate(hostName: string): Predicate<KubeObject> {
  const own = nodePredicate(hostName);
  return {
    ...own,
    update: (old, node) => own.update(old, node) && (nodeReady(old) !== nodeReady(node) || addressesDiffer(old, node)),
  };
}

function addressesDiffer(a: KubeObject, b: KubeObject): boolean {
  const x = nodeAddresses(a);
  const y = nodeAddresses(b);
  return x.internalIp !== y.internalIp || x.externalIp !== y.externalIp;
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
