import { type KubeObject, kubeTime, microTime } from "../../../../kube/index.ts";
import type { GateHold } from "../../gates/gate.ts";

/** The serial Lease's `spec` fields the agent reads and writes (coordination.k8s.io/v1). */
export interface SerialLeaseSpec {
  readonly holderIdentity?: string;
  readonly leaseDurationSeconds?: number;
  readonly acquireTime?: string;
  readonly renewTime?: string;
}

/** Upstream's lease duration for the serial lock (9.2): a dead holder blocks the others this long. */
const serialLeaseDurationSeconds = 600;

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** The spec of `lease` (undefined → empty), with ill-typed fields treated as absent. */
export function leaseSpecOf(lease: KubeObject | undefined): SerialLeaseSpec {
  const raw = lease?.["spec"];
  if (raw === null || typeof raw !== "object") return {};
  const s = raw as Record<string, unknown>;
  const out: { -readonly [K in keyof SerialLeaseSpec]: SerialLeaseSpec[K] } = {};
  const holder = str(s["holderIdentity"]);
  if (holder !== undefined) out.holderIdentity = holder;
  if (typeof s["leaseDurationSeconds"] === "number") out.leaseDurationSeconds = s["leaseDurationSeconds"];
  const acquire = str(s["acquireTime"]);
  if (acquire !== undefined) out.acquireTime = acquire;
  const renew = str(s["renewTime"]);
  if (renew !== undefined) out.renewTime = renew;
  return out;
}

const renewMs = (spec: SerialLeaseSpec): number | undefined => {
  if (spec.renewTime === undefined) return undefined;
  const t = Date.parse(spec.renewTime);
  return Number.isNaN(t) ? undefined : t;
};

/**
 * Scenario 19: false for a negative duration or no renewTime; a missing duration counts as 0 s; false
 * when `renewTime + duration == now` (the lease must end strictly after now).
 */
export function renewedInTime(spec: SerialLeaseSpec, nowMs: number): boolean {
  const renewed = renewMs(spec);
  const duration = spec.leaseDurationSeconds ?? 0;
  if (renewed === undefined || duration < 0) return false;
  return renewed + duration * 1000 > nowMs;
}

/** Time left of the holder's lease: 0 for a missing/negative duration or no renewTime; may be negative. */
export function remainingMs(spec: SerialLeaseSpec, nowMs: number): number {
  const renewed = renewMs(spec);
  const duration = spec.leaseDurationSeconds;
  if (renewed === undefined || duration === undefined || duration < 0) return 0;
  return renewed + duration * 1000 - nowMs;
}

/** Someone else holds the lease and it has not expired: wait. */
export function heldByAnother(spec: SerialLeaseSpec, me: string, nowMs: number): boolean {
  const holder = spec.holderIdentity ?? "";
  return holder !== "" && holder !== me && renewedInTime(spec, nowMs);
}

/**
 * Acquire or renew: a new holder (taking over an expired or free lease) gets duration 600 s and a fresh
 * acquireTime; renewing as the holder only moves renewTime.
 */
export function acquiredSpec(spec: SerialLeaseSpec, me: string, nowMs: number): SerialLeaseSpec {
  const now = microTime(nowMs);
  if (spec.holderIdentity === me) return { ...spec, renewTime: now };
  return { holderIdentity: me, leaseDurationSeconds: serialLeaseDurationSeconds, acquireTime: now, renewTime: now };
}

/** Release clears all four fields; undefined (nothing to write) when `me` is not the holder. */
export function releasedSpec(spec: SerialLeaseSpec, me: string): SerialLeaseSpec | undefined {
  if (spec.holderIdentity !== me) return undefined;
  return {};
}

/** Lowest requeue while waiting, so a lease that ends this very millisecond is not polled in a loop. */
const minWaitMs = 1_000;

/** When the holder's lease ends (renewTime + duration; a missing duration counts as 0 s). */
function leaseEndMs(spec: SerialLeaseSpec): number {
  return (renewMs(spec) ?? 0) + Math.max(0, spec.leaseDurationSeconds ?? 0) * 1000;
}

/** The serial decision (9.2): wait while another live holder has the Lease (at least 1 s); undefined: `me` may take it. */
export function serialLockHold(spec: SerialLeaseSpec, me: string, leaseName: string, nowMs: number): GateHold | undefined {
  if (!heldByAnother(spec, me, nowMs)) return undefined;
  const until = kubeTime(leaseEndMs(spec));
  return {
    reason: "WaitingForSerialLock",
    message: `Waiting for the serial reconciliation lock (Lease kube-system/${leaseName}) held by ${spec.holderIdentity ?? ""} until ${until}`,
    requeueAfterMs: Math.max(minWaitMs, remainingMs(spec, nowMs)),
  };
}
