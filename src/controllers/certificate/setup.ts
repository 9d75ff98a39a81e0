import type { Clock } from "../../clock/index.ts";
import type { HostFs } from "../../host/index.ts";
import type { Controller, Kube, RestConfig } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import { createReconciler } from "./reconcile.ts";
import { newCertificateController } from "./watch.ts";

export interface CertificateControllerSetup {
  /** The agent's client (current client certificate). */
  readonly kube: Kube;
  /** The REST config the agent connected with (`connect(...).restConfig`). */
  readonly restConfig: RestConfig;
  readonly host: HostFs;
  readonly clock: Clock;
  readonly log: Logger;
  /** First line of machine-name (`readMachineName(host)`). */
  readonly machineName: string;
  /** Called once after the new kubeconfig is written; the wiring stops the process with exit 0. */
  readonly onRestartRequested: (why: string) => void;
  readonly random?: () => number;
}

/** Builds the `certificate` controller (not started: the caller runs `controller.start(signal)`). */
export function setupCertificateController(s: CertificateControllerSetup): Controller {
  const reconcile = createReconciler({
    kube: s.kube,
    restConfig: s.restConfig,
    host: s.host,
    clock: s.clock,
    log: s.log.child({ controller: "certificate" }),
    machineName: s.machineName,
    ...(s.random !== undefined ? { random: s.random } : {}),
  });
  return newCertificateController({
    reconcile,
    clock: s.clock,
    log: s.log,
    onRestartRequested: s.onRestartRequested,
  });
}
