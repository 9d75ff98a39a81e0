import type { Clock } from "../../clock/index.ts";
import type { Controller, InformerSet, Kube, KubeObject } from "../../kube/index.ts";
import { CachedReader, nodes } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import type { Systemd } from "../../systemd/index.ts";
import type { EventRecorder } from "../events.ts";
import { type NodeIdentity, nodeSelectors } from "../shared/index.ts";
import type { HealthChecker } from "./checker.ts";
import { ContainerdChecker, type ContainerdVersionProbe } from "./containerd.ts";
import { hostInterfaceAddresses, type ListHostAddresses } from "./host-addresses.ts";
import { httpGet } from "./http-get.ts";
import { KubeletChecker } from "./kubelet.ts";
import { kubeletHealthUrl, type ProbeFetch } from "./kubelet-probe.ts";
import { createReconciler } from "./reconcile.ts";
import { controllerName, newHealthCheckController } from "./watch.ts";

export interface HealthCheckSetup {
  readonly kube: Kube;
  /** The shared cache; the Node informer (selectors from `nodeSelectors`) is taken from it. */
  readonly informers: InformerSet;
  readonly node: NodeIdentity;
  readonly systemd: Systemd;
  readonly events: EventRecorder;
  /** The one clock for failure durations and toggle windows (and the requeue timer). */
  readonly clock: Clock;
  readonly log: Logger;
  /** containerd's Version API; production: `createCtrVersionProbe(env.containerd)` (cli/agent). */
  readonly containerdProbe: ContainerdVersionProbe;
  /** Default: `httpGet` (fetch, never proxied). */
  readonly fetch?: ProbeFetch;
  /**
   * The kubelet's first probe waits for it (production: the agent has started and reported ready),
   * so the probe's request and its outcome stay off the start-up path. Default: no wait.
   */
  readonly firstProbeAfter?: Promise<void>;
  /** Default: `http://127.0.0.1:10248/healthz`. */
  readonly kubeletHealthUrl?: string;
  /** Default: the host's interfaces (`node:os` networkInterfaces). */
  readonly listAddresses?: ListHostAddresses;
}

/** Builds the `health-check` controller (not started: the caller runs `controller.start(signal)`). */
export function setupHealthCheckController(s: HealthCheckSetup): Controller {
  const source = s.informers.informerFor<KubeObject>(nodes, "", nodeSelectors(s.node));
  const log = s.log.child({ controller: controllerName });
  const checkers: HealthChecker[] = [
    new ContainerdChecker({
      probe: s.containerdProbe,
      systemd: s.systemd,
      events: s.events,
      clock: s.clock,
      log: log.child({ checker: "containerd" }),
    }),
    new KubeletChecker({
      kube: s.kube,
      systemd: s.systemd,
      events: s.events,
      clock: s.clock,
      log: log.child({ checker: "kubelet" }),
      listAddresses: s.listAddresses ?? hostInterfaceAddresses,
      fetch: s.fetch ?? httpGet,
      healthUrl: s.kubeletHealthUrl ?? kubeletHealthUrl,
      ...(s.firstProbeAfter !== undefined ? { firstProbeAfter: s.firstProbeAfter } : {}),
    }),
  ];
  return newHealthCheckController({
    reconcile: createReconciler({ nodes: new CachedReader(s.informers), checkers, log }),
    source,
    hostName: s.node.hostName,
    clock: s.clock,
    log: s.log,
  });
}
