import type { Clock } from "../../clock/index.ts";
import type { HostFs } from "../../host/index.ts";
import type { Controller, InformerSet, KubeObject } from "../../kube/index.ts";
import { CachedReader, nodes } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import type { EventRecorder } from "../events.ts";
import { type NodeIdentity, nodeSelectors } from "../shared/index.ts";
import { createReconciler } from "./reconcile.ts";
import { newSecretNameChangeController } from "./watch.ts";

export interface SecretNameChangeSetup {
  /** The shared cache; the Node informer (selectors from `nodeSelectors`) is taken from it. */
  readonly informers: InformerSet;
  readonly node: NodeIdentity;
  readonly host: HostFs;
  /** Host path of the config file that was read at start-up. */
  readonly configPath: string;
  readonly events: EventRecorder;
  readonly clock: Clock;
  readonly log: Logger;
  /** Called once the file names the new secret; the wiring stops the process with exit 0. */
  readonly onRestartRequested: (why: string) => void;
}

/** Builds the `secret-name-change` controller (not started: the caller runs `controller.start(signal)`). */
export function setupSecretNameChangeController(s: SecretNameChangeSetup): Controller {
  const source = s.informers.informerFor<KubeObject>(nodes, "", nodeSelectors(s.node));
  const log = s.log.child({ controller: "secret-name-change" });
  return newSecretNameChangeController({
    reconcile: createReconciler({ nodes: new CachedReader(s.informers), host: s.host, configPath: s.configPath, events: s.events, log }),
    source,
    hostName: s.node.hostName,
    clock: s.clock,
    log: s.log,
    onRestartRequested: s.onRestartRequested,
  });
}
