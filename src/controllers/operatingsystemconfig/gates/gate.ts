/**
 * Why the OSC controller does not apply (or does not yet record as applied) the current OSC version.
 * Each reason is also the reason of the Node condition `OperatingSystemConfigApplied` (status False),
 * so a waiting node is visible without logs. Gates return a `GateHold`; the reconcile logs it, records
 * a Normal event once per OSC checksum and reason, and requeues.
 */
export type GateReason =
  | "Held"
  | "SecretMissing"
  | "WaitingForDrain"
  | "WaitingForSerialLock"
  | "WaitingForStaticPods"
  | "WaitingForRolloutSlot"
  | "VerifyingRollout"
  | "RolloutHalted"
  | "UnitReverted";

export interface GateHold {
  readonly reason: GateReason;
  /** Operator-facing sentence: what holds the apply and what is pending (never OSC file content). */
  readonly message: string;
  /** When to look again if no watch event arrives first. */
  readonly requeueAfterMs: number;
}
