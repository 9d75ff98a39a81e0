import type { Clock } from "../../clock/index.ts";
import type { Controller, InformerSet, Kube, KubeObject, Reconcile } from "../../kube/index.ts";
import { CachedReader, nodes } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import type { HealthChecks, MetricsRegistry } from "../../server/index.ts";
import { type NodeIdentity, nodeSelectors } from "../shared/index.ts";
import { healthCheckName, LeaseHeartbeat } from "./heartbeat.ts";
import { createReconciler } from "./reconcile.ts";
import { leaseDurationSeconds as defaultDuration, newLeaseController } from "./watch.ts";

export interface LeaseControllerSetup {
  readonly kube: Kube;
  /** The shared cache; the Node informer (selectors from `nodeSelectors`) is taken from it. */
  readonly informers: InformerSet;
  /** The node name as discovered at start-up decides whether the controller exists at all. */
  readonly node: NodeIdentity;
  readonly clock: Clock;
  readonly log: Logger;
  /** Gets the healthz check `lease-renewal`. */
  readonly health: HealthChecks;
  /** Gets the renewal counter and last-renewal gauge. */
  readonly metrics: MetricsRegistry;
  /** Tests shorten it; production is 40. */
  readonly leaseDurationSeconds?: number;
}

export interface LeaseController {
  readonly controller: Controller;
  readonly heartbeat: LeaseHeartbeat;
}

/**
 * Builds the `lease` controller — only when the node name was known at start-up (controllers.md §3:
 * otherwise the agent would have to watch every Lease in kube-system, which the authorizer forbids;
 * the OSC controller restarts the agent once the Node appears). Returns undefined when not
 * registered. Not started: the caller runs `controller.start(signal)`.
 */
export function setupLeaseController(s: LeaseControllerSetup): LeaseController | undefined {
  if (s.node.nodeName === undefined || s.node.nodeName === "") {
    s.log.info("Node name not known yet, not registering the lease controller");
    return undefined;
  }
  const duration = s.leaseDurationSeconds ?? defaultDuration;
  const heartbeat = new LeaseHeartbeat(s.clock, duration, s.metrics);
  s.health.addHealthzCheck(healthCheckName, heartbeat.healthCheck);
  const source = s.informers.informerFor<KubeObject>(nodes, "", nodeSelectors(s.node));
  const renew = createReconciler({
    nodes: new CachedReader(s.informers),
    kube: s.kube,
    clock: s.clock,
    log: s.log.child({ controller: "lease" }),
    leaseDurationSeconds: duration,
    onRenewed: (atMs) => heartbeat.renewed(atMs),
  });
  const reconcile: Reconcile = (key, signal) => {
    heartbeat.begin(); // only the first call counts
    return renew(key, signal);
  };
  const controller = newLeaseController({
    reconcile,
    source,
    hostName: s.node.hostName,
    leaseDurationSeconds: duration,
    clock: s.clock,
    log: s.log,
  });
  return { controller, heartbeat };
}
