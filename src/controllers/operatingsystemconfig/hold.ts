import type { Result } from "../../kube/reconcile.ts";
import type { KubeObject } from "../../kube/types.ts";
import type { Logger } from "../../log/types.ts";
import { type EventRecorder, nodeRef } from "../events.ts";
import type { GateHold } from "./gate.ts";

/**
 * Turns a gate's hold into what an operator sees without the Node condition: a log line every time,
 * an event once per OSC checksum and reason (Warning for a halted rollout, Normal otherwise), and the
 * requeue the gate asked for.
 */
export class HoldReporter {
  readonly #reported = new Set<string>();

  constructor(
    private readonly log: Logger,
    private readonly events: EventRecorder,
  ) {}

  async report(node: KubeObject | undefined, checksum: string, hold: GateHold): Promise<Result> {
    this.log.info("Holding the operating system config apply", {
      reason: hold.reason,
      why: hold.message,
      checksum,
      requeueAfterMs: hold.requeueAfterMs,
    });
    const key = `${checksum}/${hold.reason}`;
    if (node !== undefined && !this.#reported.has(key)) {
      this.#reported.add(key);
      const type = hold.reason === "RolloutHalted" ? "Warning" : "Normal";
      await this.events.event(nodeRef(node), type, hold.reason, "Reconcile", hold.message);
    }
    return { requeueAfterMs: hold.requeueAfterMs };
  }
}
