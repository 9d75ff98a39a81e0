import { RestartRequested, type Reconcile } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import { checkIntervalMs } from "./watch.ts";
import { StepError } from "../../log/index.ts";

export interface HostnameCheckDeps {
  /** The lower-cased hostname read at start-up; the Node informer and predicates are keyed on it. */
  readonly hostName: string;
  /** The OS hostname now (the kernel's, or a sandbox override); lower-cased here. */
  readonly readHostname: () => string | Promise<string>;
  readonly log: Logger;
}

/** The hostname could not be read; retried with backoff. */
export class HostnameReadError extends StepError {
  override readonly name = "HostnameReadError";
}

/**
 * controllers.md §8: a changed hostname means the caches watch the wrong Node, so the agent
 * restarts (RestartRequested → exit 0 → systemd starts it again with the new name); an unchanged
 * one is looked at again after 30 s.
 */
export function createReconciler(deps: HostnameCheckDeps): Reconcile {
  return async () => {
    let current: string;
    try {
      current = (await deps.readHostname()).toLowerCase();
    } catch (err) {
      throw new HostnameReadError("failed fetching hostname", err);
    }
    if (current !== deps.hostName) {
      deps.log.info("Hostname changed, restarting the agent", { oldHostName: deps.hostName, newHostName: current });
      throw new RestartRequested(`hostname changed from ${deps.hostName} to ${current}`);
    }
    return { requeueAfterMs: checkIntervalMs };
  };
}
