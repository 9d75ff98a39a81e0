import type { KubeObject } from "../../../kube/index.ts";
import type { Osc } from "../../../osc/index.ts";
import { step } from "../apply/context.ts";
import type { OscControllerDeps } from "../deps.ts";
import type { GateHold } from "./gate.ts";
import { summarizeChanges } from "../report/history.ts";
import { holdGate, holdReason } from "../features/hold/gate.ts";
import type { LabelPatch } from "../input/label-patch.ts";
import { pendingChanges } from "../plan/planner.ts";
import { unitRevertHold } from "../features/revert/verify.ts";
import { enterRollout, type RolloutEntry, rolloutOff } from "../features/rollout/index.ts";
import { enterSerial, type SerialEntry } from "../features/serial/index.ts";

/** What the gates before an apply decided: hold (nothing of this version runs now) or go, with the slots taken. */
export type Admission =
  | { readonly kind: "hold"; readonly hold: GateHold }
  | {
      readonly kind: "go";
      /** The serial Lease when the Secret is serial (released by `leaveSerial` after a full success). */
      readonly serial: SerialEntry;
      /** The rollout slot when the pool rolls out in chunks (issue 16); `off` when serial or not chunked. */
      readonly rollout: RolloutEntry;
    };

export interface AdmissionInput {
  readonly secret: KubeObject;
  readonly osc: Osc;
  readonly checksum: string;
  readonly node: KubeObject | undefined;
  /** Whether the Node was known at process start (no lock or slot is taken while bootstrapping). */
  readonly nodeKnownAtStart: boolean;
  /** The early label patch: awaited before the pending changes are read for the hold gate. */
  readonly labels: LabelPatch;
}

/**
 * The gates an out-of-date version passes before anything of it runs, first hold wins:
 * 1. the operator's hold annotation on the Node (with the pending changes in its message);
 * 2. a version whose restarted units failed and were reverted waits for a new Secret;
 * 3. §4 step 6: one node at a time for serial Secrets (9.2);
 * 4. chunked rollouts: at most N nodes of the pool change at once (serial wins, so no slot then).
 * A hold taken here changed nothing on the host; the caller reports it (condition, event, requeue).
 */
export async function admit(deps: OscControllerDeps, input: AdmissionInput, signal: AbortSignal): Promise<Admission> {
  const { osc, checksum, node } = input;
  if (holdReason(node) !== undefined) {
    await input.labels.done();
    const pending = await pendingChanges(deps.host, osc, checksum, deps.node.hostName, deps.processPath);
    const held = holdGate(node, checksum, summarizeChanges(pending.changes), deps.config.syncPeriodMs);
    if (held !== undefined) return { kind: "hold", hold: held };
  }

  const reverted = await unitRevertHold(deps, node, checksum);
  if (reverted !== undefined) return { kind: "hold", hold: reverted };

  const serial = await step("failed acquiring serial reconciliation lock", () =>
    enterSerial(deps, input.secret, input.nodeKnownAtStart, signal),
  );
  if (serial.kind === "hold") return { kind: "hold", hold: serial.hold };

  const rollout =
    serial.kind === "off"
      ? await step("failed taking a rollout slot", () => enterRollout(deps, input.secret, node, input.nodeKnownAtStart, checksum, signal))
      : rolloutOff;
  if (rollout.kind === "hold") return { kind: "hold", hold: rollout.hold };
  return { kind: "go", serial, rollout };
}

/**
 * A verifying slot was taken by an earlier apply of this version that finished: the host is already
 * there, only the rollout's health check is left (the caller skips the apply).
 */
export const onlyVerificationLeft = (rollout: RolloutEntry): boolean => rollout.kind === "slot" && rollout.state === "verifying";
