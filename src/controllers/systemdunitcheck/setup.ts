import type { Clock } from "../../clock/index.ts";
import type { SystemdUnitCheckControllerConfig } from "../../config/index.ts";
import type { HostFs } from "../../host/index.ts";
import type { Controller, InformerSet, Kube, KubeObject } from "../../kube/index.ts";
import { CachedReader, nodes } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import type { Systemd } from "../../systemd/index.ts";
import { type NodeIdentity, nodeSelectors, type UnitCheckNow } from "../shared/index.ts";
import { createReconciler } from "./reconcile.ts";
import { controllerName, newSystemdUnitCheckController } from "./watch.ts";

export interface SystemdUnitCheckSetup {
  readonly kube: Kube;
  /** The shared cache; the Node informer (selectors from `nodeSelectors`) is taken from it. */
  readonly informers: InformerSet;
  readonly node: NodeIdentity;
  /** Reads `/var/lib/gardener-node-agent/last-applied-osc.yaml` (under `--root`). */
  readonly host: HostFs;
  readonly systemd: Systemd;
  readonly clock: Clock;
  readonly log: Logger;
  /** `controllers.systemdUnitCheck` (milliseconds, defaults 1m / 5m applied by the config decoder). */
  readonly config: SystemdUnitCheckControllerConfig;
  /** Requests for a check at once (the OSC controller's, after an apply). */
  readonly checkNow?: UnitCheckNow;
}

/** Builds the `systemd-unit-check` controller (not started: the caller runs `controller.start(signal)`). */
export function setupSystemdUnitCheckController(s: SystemdUnitCheckSetup): Controller {
  const source = s.informers.informerFor<KubeObject>(nodes, "", nodeSelectors(s.node));
  return newSystemdUnitCheckController({
    reconcile: createReconciler({
      nodes: new CachedReader(s.informers),
      kube: s.kube,
      host: s.host,
      systemd: s.systemd,
      clock: s.clock,
      log: s.log.child({ controller: controllerName }),
      syncPeriodMs: s.config.syncPeriod,
      stuckThresholdMs: s.config.stuckThreshold,
    }),
    source,
    checkNow: s.checkNow?.source,
    hostName: s.node.hostName,
    syncPeriodMs: s.config.syncPeriod,
    clock: s.clock,
    log: s.log,
  });
}
