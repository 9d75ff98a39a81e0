import type { Clock } from "../../clock/index.ts";
import { errorText, StepError } from "../../log/index.ts";
import type { KubeObject } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import type { Systemd } from "../../systemd/index.ts";
import { type EventRecorder, nodeRef } from "../events.ts";
import { eventAction, type HealthChecker, maxFailureDurationMs } from "./checker.ts";
import { restartUnit } from "./restart.ts";

const containerdServiceName = "containerd.service";

/** Asks containerd for its version (its Version API); rejects when containerd does not answer. */
export type ContainerdVersionProbe = (signal: AbortSignal) => Promise<void>;

export interface ContainerdCheckerDeps {
  readonly probe: ContainerdVersionProbe;
  readonly systemd: Systemd;
  readonly events: EventRecorder;
  readonly clock: Clock;
  readonly log: Logger;
}

/** containerd's restart failed; the failure history is kept, so the next pass restarts again. */
export class ContainerdRestartError extends StepError {
  override readonly name = "ContainerdRestartError";
  constructor(cause: unknown) {
    super("failed restarting containerd", cause);
  }
}

/** controllers.md §7 containerd checker: restart containerd after one minute without an answer. */
export class ContainerdChecker implements HealthChecker {
  readonly name = "containerd";
  #firstFailureMs: number | undefined;

  constructor(private readonly deps: ContainerdCheckerDeps) {}

  async check(node: KubeObject, signal: AbortSignal): Promise<void> {
    const { deps } = this;
    const event = (type: "Normal" | "Warning", note: string) => deps.events.event(nodeRef(node), type, this.name, eventAction, note);
    let failure: unknown;
    try {
      await deps.probe(signal);
    } catch (err) {
      signal.throwIfAborted(); // shutting down is not an unhealthy containerd
      failure = err;
    }
    if (failure === undefined) {
      if (this.#firstFailureMs !== undefined) {
        deps.log.info("Containerd is healthy again");
        await event("Normal", "Containerd is healthy");
        this.#firstFailureMs = undefined;
      }
      return;
    }

    const now = deps.clock.now();
    if (this.#firstFailureMs === undefined) {
      this.#firstFailureMs = now;
      deps.log.error("Unable to get containerd version, considered unhealthy", { err: failure });
      await event("Warning", `Containerd is unhealthy: ${errorText(failure)}`);
    }
    if (Math.abs(now - this.#firstFailureMs) < maxFailureDurationMs) return;

    deps.log.error("Containerd is unhealthy, restarting it", { err: failure, failureDuration: "1m0s" });
    await event("Warning", `Containerd is unhealthy for more than 1m0s, restarting it: ${errorText(failure)}`);
    try {
      await restartUnit(deps, node, containerdServiceName, signal);
    } catch (err) {
      throw new ContainerdRestartError(err);
    }
    this.#firstFailureMs = undefined;
  }
}
