import type { HostFs } from "../../../host/index.ts";
import type { Osc, OscChanges } from "../../../osc/index.ts";
import { containerdUnitName } from "../constants.ts";
import { assessDisruption, type DisruptionAssessment, type UnitAction, type UnitDisruption } from "../plan/disruption.ts";
import { activePolicy, effectiveDisruptionPolicy, ruleText } from "../plan/disruption-policy.ts";

export interface UnitPolicyPreview {
  readonly action: UnitAction;
  readonly why: string;
  /** `rule 2 (line 5): units [kubelet.service] → reload`; absent: no rule matched (or not governed), upstream's action. */
  readonly rule?: string;
}

/** The disruption policy as the apply would use it; present only when a policy file exists (issue 26). */
export interface DisruptionPreview {
  /** The policy file as the OSC delivers it, or the one on disk. */
  readonly source: "osc" | "host";
  /** Its rules in order (none when invalid). */
  readonly rules: readonly string[];
  /** Why the whole policy is ignored (changed units then restart as without one). */
  readonly error?: string;
  /** The apply restarts or stops a unit, or performs an in-place step (a maintenance window holds it). */
  readonly disruptive: boolean;
  /** containerd's restart for its changed configuration, when the policy changes it. */
  readonly containerd?: UnitPolicyPreview;
}

const unitPolicy = (d: UnitDisruption): UnitPolicyPreview => ({
  action: d.action,
  why: d.why,
  ...(d.rule !== undefined ? { rule: ruleText(d.rule) } : {}),
});

function disruptionPreview(
  effective: Exclude<Awaited<ReturnType<typeof effectiveDisruptionPolicy>>, { kind: "none" }>,
  assessed: DisruptionAssessment,
): DisruptionPreview {
  const containerd = effective.kind === "ok" ? assessed.units.find((u) => u.unit === containerdUnitName) : undefined;
  return {
    source: effective.source,
    rules: effective.kind === "ok" ? effective.policy.rules.map(ruleText) : [],
    ...(effective.kind === "invalid" ? { error: effective.error } : {}),
    disruptive: assessed.disruptive,
    ...(containerd !== undefined ? { containerd: unitPolicy(containerd) } : {}),
  };
}

/** The unit's restart replaced by the policy's action (a stop stays a stop). */
export function withPolicy(
  name: string,
  actions: string[],
  byUnit: ReadonlyMap<string, UnitDisruption> | undefined,
): { policy?: UnitPolicyPreview } {
  const d = byUnit?.get(name);
  if (d === undefined) return {};
  const i = actions.indexOf("restart");
  if (i >= 0 && d.action !== "restart") actions.splice(i, 1, ...(d.action === "none" ? [] : [d.action]));
  return { policy: unitPolicy(d) };
}

/**
 * The disruption policy's part of `diff` (issue 26): the block to show (only when a policy file exists) and,
 * with a usable policy, each unit's action. `planned.osc` is the OSC as the apply sees it.
 */
export async function previewDisruption(
  host: HostFs,
  delivered: Osc,
  planned: { readonly osc: Osc; readonly changes: OscChanges; readonly lastApplied: Osc | undefined },
  hostName: string,
): Promise<{ disruption?: DisruptionPreview; byUnit?: ReadonlyMap<string, UnitDisruption> }> {
  const effective = await effectiveDisruptionPolicy(host, delivered, planned.lastApplied, hostName.toLowerCase());
  if (effective.kind === "none") return {};
  const policy = activePolicy(effective);
  const assessed = assessDisruption({ ...planned, policy });
  const disruption = disruptionPreview(effective, assessed);
  return policy === undefined ? { disruption } : { disruption, byUnit: new Map(assessed.units.map((u) => [u.unit, u])) };
}
