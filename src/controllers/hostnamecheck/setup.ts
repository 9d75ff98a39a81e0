import type { Clock } from "../../clock/index.ts";
import type { Controller } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import { createReconciler } from "./reconcile.ts";
import { newHostnameCheckController } from "./watch.ts";

export interface HostnameCheckSetup {
  /** The lower-cased hostname the agent started with. */
  readonly hostName: string;
  /** Reads the OS hostname now (production: `hostNameOf(env)` in cli/agent/host-facts.ts). */
  readonly readHostname: () => string | Promise<string>;
  readonly clock: Clock;
  readonly log: Logger;
  /** Called once when the hostname changed; the wiring stops the process with exit 0. */
  readonly onRestartRequested: (why: string) => void;
}

/** Builds the `hostname-check` controller (not started: the caller runs `controller.start(signal)`). */
export function setupHostnameCheckController(s: HostnameCheckSetup): Controller {
  return newHostnameCheckController({
    reconcile: createReconciler({ hostName: s.hostName, readHostname: s.readHostname, log: s.log.child({ controller: "hostname-check" }) }),
    clock: s.clock,
    log: s.log,
    onRestartRequested: s.onRestartRequested,
  });
}
