import type { HostFs } from "../../../host/index.ts";
import type { Osc, OscChanges } from "../../../osc/index.ts";
import { type DisruptionAssessment, assessDisruption } from "./disruption.ts";
import { activePolicy, effectiveDisruptionPolicy } from "./disruption-policy.ts";
import { readLastApplied } from "./state.ts";

/**
 * What applying `changes` would disturb, under the policy that governs it, in the terms of the gate
 * contract (gates/gate.ts GateDisruption, which the gates of issue 26 read; plan/ does not import gates/).
 */
async function pendingDisruption(host: HostFs, hostName: string, osc: Osc, changes: OscChanges) {
  const lastApplied = await readLastApplied(host);
  const policy = await effectiveDisruptionPolicy(host, osc, lastApplied, hostName);
  const a = assessDisruption({ changes, osc, lastApplied, policy: activePolicy(policy) });
  return {
    disruptive: a.disruptive,
    text: disruptionText(a),
    units: a.units.length,
    ...(policy.kind === "invalid" ? { policyIgnored: policy.error } : {}),
  };
}

/** `pendingDisruption` of the change set `changes()` gives, worked out on the first call only (a GateContext's `disruption`). */
export function disruptionOnce(host: HostFs, hostName: string, osc: Osc, changes: () => Promise<OscChanges>) {
  let once: ReturnType<typeof pendingDisruption> | undefined;
  return () => (once ??= changes().then((c) => pendingDisruption(host, hostName, osc, c)));
}

/** "restarts kubelet.service, stops a.service, operating system update" — what makes the apply disruptive. */
function disruptionText(a: DisruptionAssessment): string {
  const restarts = a.units.filter((u) => u.action === "restart").map((u) => u.unit);
  const stops = a.units.filter((u) => u.action === "stop").map((u) => u.unit);
  const parts = [
    ...(restarts.length > 0 ? [`restarts ${restarts.join(", ")}`] : []),
    ...(stops.length > 0 ? [`stops ${stops.join(", ")}`] : []),
    ...a.inPlace,
  ];
  return parts.join(", ");
}
