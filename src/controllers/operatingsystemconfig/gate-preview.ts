import type { Clock } from "../../clock/index.ts";
import type { Kube, KubeObject } from "../../kube/index.ts";
import type { Osc, OscChanges } from "../../osc/index.ts";
import type { OscConditionReason } from "./condition.ts";
import type { GateHold } from "./gate.ts";
import { summarizeChanges } from "./history.ts";
import { holdGate } from "./hold.ts";
import { inPlaceGate } from "./inplace/index.ts";
import {
  decide,
  healthHold,
  liveSlots,
  mayBeGone,
  PoolNodes,
  readLease,
  rolloutParallelism,
  type RolloutTimings,
  slotDecisionHold,
  slotsOf,
  slotTime,
  verifyHealth,
} from "./rollout/index.ts";
import { getSerialLease, leaseSpecOf, serialLockHold } from "./serial/index.ts";
import { checkStaticPods, manifestsDir, StaticPodManifestError, staticPodFiles } from "./staticpods/index.ts";
import { isSerial } from "./watch.ts";
import { errorText } from "../../log/index.ts";

export type GateName = "hold" | "serial-lock" | "rollout" | "drain" | "static-pods";

/** One gate as `diff` sees it, decided by the gate's own function on what the API server says now. */
export interface GatePreview {
  readonly gate: GateName;
  /**
   * `stops`: nothing of the version is applied while it holds. `after-apply`: the files and units are
   * applied, the checksum annotation waits. `not-checked`: it needs the API server (offline) or could not be read.
   */
  readonly verdict: "stops" | "after-apply" | "not-checked";
  /** The reason the Node condition would show (absent when not checked). */
  readonly reason?: OscConditionReason;
  readonly message: string;
}

export interface GatePreviewInput {
  /** undefined offline: the gates that read the API server are reported as not checked. */
  readonly kube: Kube | undefined;
  readonly node: KubeObject | undefined;
  readonly secret: KubeObject | undefined;
  /** The OSC as decoded (static pod manifests are read from it). */
  readonly osc: Osc;
  readonly checksum: string;
  readonly hostName: string;
  readonly changes: OscChanges;
  readonly clock: Clock;
  readonly rolloutTimings: RolloutTimings;
}

const offlineText = "not checked (offline)";
const stops = (gate: GateName, h: GateHold): GatePreview => ({ gate, verdict: "stops", reason: h.reason, message: h.message });
const afterApply = (gate: GateName, reason: OscConditionReason, message: string): GatePreview => ({
  gate,
  verdict: "after-apply",
  reason,
  message,
});
const notChecked = (gate: GateName, message: string): GatePreview => ({ gate, verdict: "not-checked", message });

/**
 * Every gate that would stop or delay the apply of `checksum`, in the order the reconcile meets them:
 * hold, serial lock, rollout slot, drain (before anything is written), static pods and the rollout's
 * verification (before the checksum is recorded). Only reads.
 */
export async function previewGates(input: GatePreviewInput, signal: AbortSignal): Promise<GatePreview[]> {
  const { kube, node, checksum, changes } = input;
  const out: GatePreview[] = [];
  if (kube === undefined) {
    out.push(notChecked("hold", offlineText), notChecked("serial-lock", offlineText), notChecked("rollout", offlineText));
  } else {
    const hold = holdGate(node, checksum, summarizeChanges(changes), 0);
    if (hold !== undefined) out.push(stops("hold", hold));
    out.push(...(await guarded("serial-lock", () => serialGate(input, kube, signal), signal)));
    out.push(...(await guarded("rollout", () => rolloutGate(input, kube, signal), signal)));
  }
  // Decided from the change set and the Node: offline there is no drained Node, so an in-place change stops.
  const drain = inPlaceGate(changes, node);
  if (drain !== undefined) out.push(stops("drain", drain));
  out.push(...(await guarded("static-pods", () => staticPodsGate(input, signal), signal)));
  return out;
}

/** A gate whose objects cannot be read (e.g. forbidden) is reported as not checked, with the reason. */
async function guarded(gate: GateName, check: () => Promise<GatePreview[]>, signal: AbortSignal): Promise<GatePreview[]> {
  try {
    return await check();
  } catch (err) {
    if (signal.aborted) throw err;
    return [notChecked(gate, `not checked: ${errorText(err)}`)];
  }
}

/** 9.2: only for a serial Secret and a registered Node (the reconcile's `enterSerial`). */
async function serialGate(input: GatePreviewInput, kube: Kube, signal: AbortSignal): Promise<GatePreview[]> {
  const { node, secret } = input;
  if (node === undefined || secret === undefined || !isSerial(secret)) return [];
  const name = secret.metadata.name ?? "";
  const lease = await getSerialLease(kube, name, signal);
  const hold = serialLockHold(leaseSpecOf(lease), input.hostName.toLowerCase(), name, input.clock.now());
  return hold === undefined ? [] : [stops("serial-lock", hold)];
}

/** Issue 16: the slot decision for a Node with rollout-parallelism (the reconcile's `enterRollout`, without writing). */
async function rolloutGate(input: GatePreviewInput, kube: Kube, signal: AbortSignal): Promise<GatePreview[]> {
  const { node, secret, checksum, clock, rolloutTimings: t } = input;
  const n = node === undefined ? undefined : rolloutParallelism(node.metadata.annotations);
  if (node === undefined || secret === undefined || n === undefined || isSerial(secret)) return [];
  const pool = secret.metadata.name ?? "";
  const me = node.metadata.name ?? "";
  const slots = slotsOf((await readLease(kube, pool, signal))?.metadata.annotations);
  const now = clock.now();
  const asked = [...slots].filter(([name, s]) => name !== me && mayBeGone(s, now, t)).map(([name]) => name);
  const { current } = liveSlots(slots, me, await new PoolNodes(clock, 0).gone(kube, pool, asked, signal));
  let d = decide(current, me, checksum, n, now, t);
  // The agent registers a waiting entry first and decides again on its next look (within a second).
  if (d.kind === "register") {
    current.set(me, { checksum, since: slotTime(now), renewed: slotTime(now), state: "waiting" });
    d = decide(current, me, checksum, n, now, t);
  }
  const leaseName = `Lease kube-system/${pool}`;
  const hold = slotDecisionHold(d, n, leaseName, t);
  if (hold !== undefined) return [stops("rollout", hold)];
  if (d.kind === "resume" && d.state === "verifying") {
    const since = Date.parse(current.get(me)?.since ?? "");
    const verifying = healthHold(verifyHealth(node, since, since, now, t), t);
    return verifying === undefined ? [] : [afterApply("rollout", verifying.reason, verifying.message)];
  }
  const slot = d.kind === "take" ? `Takes one of ${n} rollout slots on ${leaseName}` : `Holds a rollout slot on ${leaseName}`;
  return [
    afterApply(
      "rollout",
      "VerifyingRollout",
      `${slot}; after the apply the Node must be Ready with SystemdUnitsReady for ${Math.round(t.healthyForMs / 1000)}s before the slot is released and the checksum recorded`,
    ),
  ];
}

/** 9.1: the checksum waits until the OSC's static pods run as their manifests say (the reconcile's `checkStaticPods`). */
async function staticPodsGate(input: GatePreviewInput, signal: AbortSignal): Promise<GatePreview[]> {
  const host = input.hostName.toLowerCase();
  if (staticPodFiles(input.osc, host).length === 0) return [];
  const written = input.changes.files.changed.filter((f) => f.path.startsWith(`${manifestsDir}/`)).map((f) => f.path);
  const writes = written.length === 0 ? "" : `the new config writes ${written.join(", ")}; `;
  const waits = `${writes}the checksum is recorded only once kubelet runs the mirror pods of the manifests`;
  if (input.kube === undefined) return [notChecked("static-pods", `${offlineText}: ${waits}`)];
  const nodeName = input.node?.metadata.name;
  if (nodeName === undefined) return [notChecked("static-pods", `not checked (no Node yet): ${waits}`)];
  let hold: GateHold | undefined;
  try {
    hold = await checkStaticPods(input.kube, input.osc, host, nodeName, signal);
  } catch (err) {
    if (!(err instanceof StaticPodManifestError)) throw err;
    return [afterApply("static-pods", "ApplyFailed", err.message)];
  }
  if (hold !== undefined) {
    const why = written.length === 0 ? "" : ` (the new config writes ${written.join(", ")}; the checksum waits for their mirror pods)`;
    return [afterApply("static-pods", hold.reason, `${hold.message}${why}`)];
  }
  return written.length === 0
    ? []
    : [afterApply("static-pods", "WaitingForStaticPods", `${waits} (their mirror pods match the new manifests already)`)];
}
