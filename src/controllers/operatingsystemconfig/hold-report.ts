import type { KubeObject } from "../../kube/types.ts";
import { nodeRef } from "../events.ts";
import type { OscControllerDeps } from "./deps.ts";
import type { GateHold } from "./gate.ts";

/**
 * Makes a held apply visible: a log line on every look (with the reason), and one Normal Node event
 * per OSC checksum and reason for the life of the process (not one per requeue).
 */
export function createHoldReporter(deps: Pick<OscControllerDeps, "log" | "events">): (hold: GateHold, checksum: string, node: KubeObject | undefined) => Promise<void> {
  const reported = new Set<string>();
  return async (hold, checksum, node) => {
    deps.log.info("Operating system config not applied yet", { reason: hold.reason, message: hold.message, checksum, requeueAfterMs: hold.requeueAfterMs });
    const key = `${checksum}/${hold.reason}`;
    if (node === undefined || reported.has(key)) return;
    reported.add(key);
    await deps.events.event(nodeRef(node), "Normal", hold.reason, "Reconcile", hold.message);
  };
}
