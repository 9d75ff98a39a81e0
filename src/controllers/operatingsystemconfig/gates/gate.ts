import type { KubeObject } from "../../../kube/index.ts";
import type { Osc, OscChanges } from "../../../osc/index.ts";

/** Why the current OSC version is not applied (or not yet recorded); also the Node condition's reason. */
export type GateReason =
  | "Held"
  | "SecretMissing"
  | "WaitingForDrain"
  | "WaitingForSerialLock"
  | "WaitingForStaticPods"
  | "WaitingForRolloutSlot"
  | "VerifyingRollout"
  | "RolloutHalted"
  | "UnitReverted"
  | "WaitingForMaintenanceWindow"
  | "WaitingForDisruptionApproval"
  | "WaitingForBlockingPods"
  /** Not a gate: the pending version could not be staged (stage/), so no gate was asked. */
  | "StagingFailed";

export interface GateHold {
  readonly reason: GateReason;
  /** Operator-facing sentence: what holds the apply and what is pending (never OSC file content). */
  readonly message: string;
  /** When to look again if no watch event arrives first. */
  readonly requeueAfterMs: number;
}

/** Where a gate stands: before anything | under the apply lock, after planning | before the checksum is recorded. */
export type GatePhase = "admit" | "plan" | "record";
export type GateName =
  | "hold"
  | "unit-revert"
  | "maintenance-window"
  | "disruption-hooks"
  | "blocking-pods"
  | "serial-lock"
  | "rollout"
  | "drain"
  | "static-pods";

/** What `diff` says of a gate that needs the API server when there is none. */
export const offlineText = "not checked (offline)";

export type Decision =
  /** `note`: what `diff` says the gate does after the apply (a slot to verify, static pods to wait for). */
  | { readonly kind: "proceed"; readonly note?: { readonly reason: GateReason | "ApplyFailed"; readonly message: string } }
  | { readonly kind: "hold"; readonly hold: GateHold }
  /** Dry run only: the gate could not look (offline, no Node yet); `diff` shows it as not checked. */
  | { readonly kind: "unknown"; readonly why: string };

/** What applying the pending change set disturbs (issue 26), as plan/pending-disruption.ts assesses it. */
export interface GateDisruption {
  /** Restarts or stops a unit, or performs an in-place step; reloads, daemon-reloads and writes alone are not. */
  readonly disruptive: boolean;
  /** What makes it disruptive: "restarts kubelet.service, stops a.service, operating system update"; "" for nothing. */
  readonly text: string;
  /** How many units the apply touches beyond writing files (also those the policy only reloads or leaves). */
  readonly units: number;
  /** The disruption policy is invalid and ignored (changed units restart as without one): why. */
  readonly policyIgnored?: string;
}

/** What a gate may look at (built once per reconcile or `diff`); nothing in it writes. */
export interface GateContext {
  readonly checksum: string;
  readonly osc: Osc;
  readonly secret: KubeObject | undefined;
  /** The Secret asks for one node at a time (9.2). */
  readonly serial: boolean;
  readonly node: KubeObject | undefined;
  /** No lock or slot is taken while bootstrapping (the Node was unknown at process start). */
  readonly nodeKnownAtStart: boolean;
  /** The change set: inside the apply (plan phase) the apply's own, else the pending one, planned on first call. */
  changes(): Promise<OscChanges>;
  /** What `changes()` would disturb under the disruption policy (last-applied and the policy read once, on first call). */
  disruption(): Promise<GateDisruption>;
  /** `diff`: decide only, nothing is written. */
  readonly dryRun: boolean;
  /** An API server is there to ask (not for `diff --offline` and `apply --offline`). */
  readonly online: boolean;
  readonly signal: AbortSignal;
}

/** What a gate took for this version (the serial Lease, a rollout slot), handed back at the end. */
export interface Reservation {
  /** A slot of this version found verifying: the host is there already, the apply is skipped. */
  readonly hostAlreadyApplied?: boolean;
  /** After the record-phase gates: may hold the checksum (a slot verifying health). */
  verify?(node: KubeObject, signal: AbortSignal): Promise<GateHold | undefined>;
  /** The apply threw (a restarted unit failed: the slot becomes failed). */
  abandon?(err: unknown, node: KubeObject | undefined, signal: AbortSignal): Promise<void>;
  /** The checksum is on the Node: give it back. */
  release?(signal: AbortSignal): Promise<void>;
}

export type Reserved =
  | { readonly kind: "hold"; readonly hold: GateHold }
  | { readonly kind: "reserved"; readonly reservation?: Reservation };

/** `reserve`, where present, decides and takes in one step and replaces `decide` in the live run. */
export interface Gate {
  readonly name: GateName;
  readonly phase: GatePhase;
  /** The StepError label of a live failure (it surfaces in the Node condition). */
  readonly step?: string;
  /** Needs the API server: offline, `diff` shows it as not checked without asking. */
  readonly online?: boolean;
  decide(ctx: GateContext): Promise<Decision>;
  reserve?(ctx: GateContext): Promise<Reserved>;
  /** The reconcile has nothing for the gates to guard (no Secret, a rejected one, the Node up to date): stop waiting. */
  nothingToGuard?(): void;
}
