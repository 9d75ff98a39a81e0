import type { HostFs } from "../../../host/index.ts";
import type { Osc, OscChanges } from "../../../osc/index.ts";
import { type DisruptionAssessment, assessDisruption } from "./disruption.ts";
import { activePolicy, type EffectivePolicy, effectiveDisruptionPolicy } from "./disruption-policy.ts";
import { readLastApplied } from "./state.ts";

export interface PendingDisruption {
  readonly assessment: DisruptionAssessment;
  /** The policy the assessment went by (an invalid one counted as none; the gates say so). */
  readonly policy: EffectivePolicy;
}

/** What applying `changes` would disturb, under the policy that governs it (the gates of issue 26 ask this). */
async function pendingDisruption(host: HostFs, hostName: string, osc: Osc, changes: OscChanges): Promise<PendingDisruption> {
  const lastApplied = await readLastApplied(host);
  const policy = await effectiveDisruptionPolicy(host, osc, lastApplied, hostName);
  return { assessment: assessDisruption({ changes, osc, lastApplied, policy: activePolicy(policy) }), policy };
}

/** `pendingDisruption` of the change set `changes()` gives, worked out on the first call only (a GateContext's `disruption`). */
export function disruptionOnce(
  host: HostFs,
  hostName: string,
  osc: Osc,
  changes: () => Promise<OscChanges>,
): () => Promise<PendingDisruption> {
  let once: Promise<PendingDisruption> | undefined;
  return () => (once ??= changes().then((c) => pendingDisruption(host, hostName, osc, c)));
}

/** "restarts kubelet.service, stops a.service, operating system update" — what makes the apply disruptive. */
export function disruptionText(a: DisruptionAssessment): string {
  const restarts = a.units.filter((u) => u.action === "restart").map((u) => u.unit);
  const stops = a.units.filter((u) => u.action === "stop").map((u) => u.unit);
  const parts = [
    ...(restarts.length > 0 ? [`restarts ${restarts.join(", ")}`] : []),
    ...(stops.length > 0 ? [`stops ${stops.join(", ")}`] : []),
    ...a.inPlace,
  ];
  return parts.join(", ");
}
