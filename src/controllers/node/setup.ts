import type { Clock } from "../../clock/index.ts";
import type { Controller, InformerSet, Kube, KubeObject } from "../../kube/index.ts";
import { CachedReader, nodes } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import type { Systemd } from "../../systemd/index.ts";
import type { EventRecorder } from "../events.ts";
import { createReconciler } from "./reconcile.ts";
import { type NodeIdentity, nodeSelectors } from "../shared/index.ts";
import { newNodeController } from "./watch.ts";

export interface NodeControllerSetup {
  readonly kube: Kube;
  /** The shared cache; the Node informer (selectors from `nodeSelectors`) is taken from it. */
  readonly informers: InformerSet;
  readonly node: NodeIdentity;
  readonly systemd: Systemd;
  readonly events: EventRecorder;
  readonly clock: Clock;
  readonly log: Logger;
}

/** Builds the `node` controller (not started: the caller runs `controller.start(signal)`). */
export function setupNodeController(s: NodeControllerSetup): Controller {
  const source = s.informers.informerFor<KubeObject>(nodes, "", nodeSelectors(s.node));
  const log = s.log.child({ controller: "node" });
  return newNodeController({
    reconcile: createReconciler({ nodes: new CachedReader(s.informers), kube: s.kube, systemd: s.systemd, events: s.events, log }),
    source,
    hostName: s.node.hostName,
    clock: s.clock,
    log: s.log,
  });
}
