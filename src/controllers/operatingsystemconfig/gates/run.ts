import type { KubeObject } from "../../../kube/index.ts";
import { step } from "../../../log/index.ts";
import type { Decision, Gate, GateContext, GateHold, GatePhase, Reservation, Reserved } from "./gate.ts";

/** What the admit-phase gates decided: hold (nothing of this version runs now) or go, with what they took. */
export type Admission =
  | { readonly kind: "hold"; readonly hold: GateHold }
  | { readonly kind: "go"; readonly reservations: readonly Reservation[] };

const labelled = <T>(gate: Gate, fn: () => Promise<T>): Promise<T> => (gate.step === undefined ? fn() : step(gate.step, fn));

function liveVerdict(gate: Gate, d: Decision): GateHold | undefined {
  if (d.kind === "unknown") throw new Error(`gate ${gate.name} could not decide: ${d.why}`);
  return d.kind === "hold" ? d.hold : undefined;
}

/** The admit phase, first hold wins (`reserve` where present, else `decide`); a hold here changed nothing on the host. */
/** Tells every gate that this reconcile has nothing for it to guard (e.g. a rollout slot waiter stops polling). */
export function nothingToGuard(gates: readonly Gate[]): void {
  for (const g of gates) g.nothingToGuard?.();
}

export async function admit(gates: readonly Gate[], ctx: GateContext): Promise<Admission> {
  const reservations: Reservation[] = [];
  for (const gate of gates) {
    if (gate.phase !== "admit") continue;
    const reserved: Reserved = await labelled(gate, async () => {
      if (gate.reserve !== undefined) return gate.reserve(ctx);
      const hold = liveVerdict(gate, await gate.decide(ctx));
      return hold === undefined ? { kind: "reserved" } : { kind: "hold", hold };
    });
    if (reserved.kind === "hold") return { kind: "hold", hold: reserved.hold };
    if (reserved.reservation !== undefined) reservations.push(reserved.reservation);
  }
  return { kind: "go", reservations };
}

/** The `plan` or `record` phase: each gate of it decides, first hold wins. */
export async function firstHold(
  gates: readonly Gate[],
  phase: Exclude<GatePhase, "admit">,
  ctx: GateContext,
): Promise<GateHold | undefined> {
  for (const gate of gates) {
    if (gate.phase !== phase) continue;
    const hold = liveVerdict(gate, await labelled(gate, () => gate.decide(ctx)));
    if (hold !== undefined) return hold;
  }
  return undefined;
}

/** A reservation found the host already at this version (a verifying rollout slot): the apply is skipped. */
export const hostAlreadyApplied = (a: Admission & { kind: "go" }): boolean => a.reservations.some((r) => r.hostAlreadyApplied === true);

/** After the record-phase gates: each reservation verifies, first hold wins. */
export async function verifyReserved(
  reservations: readonly Reservation[],
  node: KubeObject,
  signal: AbortSignal,
): Promise<GateHold | undefined> {
  for (const r of reservations) {
    const hold = await r.verify?.(node, signal);
    if (hold !== undefined) return hold;
  }
  return undefined;
}

/** The apply threw: each reservation is told (its own failure is its to report). */
export async function abandonReserved(
  reservations: readonly Reservation[],
  err: unknown,
  node: KubeObject | undefined,
  signal: AbortSignal,
): Promise<void> {
  for (const r of reservations) await r.abandon?.(err, node, signal);
}

/** The checksum is on the Node: everything taken goes back. */
export async function releaseReserved(reservations: readonly Reservation[], signal: AbortSignal): Promise<void> {
  for (const r of reservations) await r.release?.(signal);
}
