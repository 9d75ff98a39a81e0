import type { Decision, Gate, GateContext } from "../../gates/gate.ts";
import { enterRollout, leaveRollout, lookAtSlots, type RolloutGateDeps, timingsOf } from "./gate.ts";
import { unitsChecked, verifyHealth } from "./health.ts";
import { healthHold, slotDecisionHold } from "./holds.ts";
import { readLease } from "./lease-slots.ts";
import { rolloutParallelism, slotsOf } from "./slots.ts";

/**
 * Issue 16: nodes annotated `node-agent.gardener.cloud/rollout-parallelism: "N"` take one of N slots on
 * the pool's Lease. Serial wins: a serial Secret on a Node known at start keeps upstream's lock, no slot metric moves.
 */
export function rolloutGate(d: RolloutGateDeps): Gate {
  return {
    name: "rollout",
    phase: "admit",
    step: "failed taking a rollout slot",
    online: true,
    decide: (ctx) => previewSlot(d, ctx),
    async reserve(ctx) {
      if ((ctx.serial && ctx.nodeKnownAtStart) || ctx.secret === undefined) return { kind: "reserved" };
      return enterRollout(d, ctx.secret, ctx.node, ctx.nodeKnownAtStart, ctx.checksum, ctx.signal, unitsChecked(ctx.osc));
    },
    nothingToGuard: () => leaveRollout(d.rollout),
  };
}

/** The slot decision `reserve` would make, read-only (`diff`): what it waits for or does after the apply. */
async function previewSlot(d: RolloutGateDeps, ctx: GateContext): Promise<Decision> {
  const { node, secret, checksum } = ctx;
  const n = node === undefined ? undefined : rolloutParallelism(node.metadata.annotations);
  if (node === undefined || secret === undefined || n === undefined || ctx.serial) return { kind: "proceed" };
  const t = timingsOf(d);
  const pool = secret.metadata.name ?? "";
  const me = node.metadata.name ?? "";
  const slots = slotsOf((await readLease(d.kube, pool, ctx.signal))?.metadata.annotations);
  const { now, current, decision: slot } = await lookAtSlots(d, secret, slots, me, checksum, n, ctx.signal);
  const leaseName = `Lease kube-system/${pool}`;
  const hold = slotDecisionHold(slot, n, leaseName, t);
  if (hold !== undefined) return { kind: "hold", hold };
  if (slot.kind === "resume" && slot.state === "verifying") {
    const since = Date.parse(current.get(me)?.since ?? "");
    const verifying = healthHold(verifyHealth(node, since, since, now, t, unitsChecked(ctx.osc)), t);
    return verifying === undefined
      ? { kind: "proceed" }
      : { kind: "proceed", note: { reason: verifying.reason, message: verifying.message } };
  }
  const taken = slot.kind === "take" ? `Takes one of ${n} rollout slots on ${leaseName}` : `Holds a rollout slot on ${leaseName}`;
  const message = `${taken}; after the apply the Node must be Ready with SystemdUnitsReady for ${Math.round(t.healthyForMs / 1000)}s before the slot is released and the checksum recorded`;
  return { kind: "proceed", note: { reason: "VerifyingRollout", message } };
}
