import type { GateHold } from "../../gates/gate.ts";
import type { HealthVerdict } from "./health.ts";
import type { SlotDecision } from "./slots.ts";
import type { RolloutTimings } from "./timings.ts";

const hold = (reason: GateHold["reason"], message: string, requeueAfterMs: number): GateHold => ({ reason, message, requeueAfterMs });

/**
 * The most slot holders a waiting node names. A longer list changes at nearly every handoff, and each change
 * re-sent the Node condition of every waiting node (issue 25: 200 nodes, 20 slots); the Lease names them.
 */
const namedHolders = 3;

const waitingBehind = (behind: readonly string[]): string =>
  behind.length === 0
    ? ": one is free, trying it after a random pause"
    : behind.length <= namedHolders
      ? `, behind ${behind.join(", ")}`
      : `: all taken, by ${behind.length} nodes (the Lease's slot annotations name them)`;

/**
 * What a slot decision means for the apply, shared by the controller and `diff`: a GateHold when the
 * node must not change now; undefined when it holds (takes or resumes) a slot. `lease` names the Lease.
 */
export function slotDecisionHold(d: SlotDecision, n: number, lease: string, t: RolloutTimings): GateHold | undefined {
  switch (d.kind) {
    case "resume":
    case "take":
      return undefined;
    case "own-failed":
      return hold(
        "RolloutHalted",
        `The change to this node failed; its slot on ${lease} stays failed until a fixed OSC is rolled out or the slot annotation is removed`,
        t.verifyTimeoutMs,
      );
    case "wait":
      return hold("WaitingForRolloutSlot", `Waiting for one of ${n} rollout slots on ${lease}${waitingBehind(d.behind)}`, t.renewEveryMs);
    case "halted":
      return hold(
        "RolloutHalted",
        `Rollout halted: the change failed on (or stopped renewing the slot of) ${d.failed.join(", ")}, filling all ${n} slots of ${lease}; roll out a fixed OSC or remove their slot annotations to resume`,
        t.renewEveryMs,
      );
  }
}

/** What a verifying node's health verdict means: undefined once healthy (the slot is released). */
export function healthHold(v: HealthVerdict, t: RolloutTimings): GateHold | undefined {
  if (v.kind === "healthy") return undefined;
  if (v.kind === "failed") return hold("RolloutHalted", `The change to this node failed: ${v.why}`, t.verifyTimeoutMs);
  return hold("VerifyingRollout", `Verifying the node after the change: ${v.why}`, v.recheckInMs);
}
