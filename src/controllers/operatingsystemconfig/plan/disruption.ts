import type { Osc, OscChanges, OscFile, Unit } from "../../../osc/index.ts";
import { agentUnitName, containerdUnitName } from "../constants.ts";
import { type DisruptionPolicy, disruptionPolicyPath, type PolicyAction, type PolicyRule, ruleMatchesFile } from "./disruption-policy.ts";
import { envDropInName } from "./env-dropin.ts";
import { sameFile, semanticEqual } from "./equal.ts";
import { mergeUnits } from "./merge.ts";

/** What the apply does to one unit: a policy action, or a stop (never governed by the policy). */
export type UnitAction = PolicyAction | "stop";

export interface UnitDisruption {
  readonly unit: string;
  readonly action: UnitAction;
  /** Why the unit is touched at all: "unit changed", "file /etc/x changed", "new unit", … */
  readonly why: string;
  /** The policy rule that chose the action; undefined = upstream's default (no policy, no match, or not governed). */
  readonly rule?: PolicyRule;
}

export interface DisruptionAssessment {
  /** Restarts or stops a unit, or performs an in-place step (issue 26); daemon-reload, reload and writes are not. */
  readonly disruptive: boolean;
  /** Every unit the apply touches beyond writing its files, in the change set's order. */
  readonly units: readonly UnitDisruption[];
  /** The in-place steps the change set performs ("operating system update", …). */
  readonly inPlace: readonly string[];
}

export interface DisruptionInput {
  /** The work list as planned (plan/planner.ts `PlannedChanges.changes`, or a gate's `ctx.changes()`). */
  readonly changes: OscChanges;
  /** The OSC the apply installs (with or without containerd's env drop-in; it is ignored in comparisons). */
  readonly osc: Osc;
  readonly lastApplied: Osc | undefined;
  /** The effective policy (`effectiveDisruptionPolicy`); undefined = none, upstream's behaviour. */
  readonly policy: DisruptionPolicy | undefined;
}

const strength: Readonly<Record<PolicyAction, number>> = { none: 0, reload: 1, "daemon-reload": 2, restart: 3 };

const withoutEnvDropIn = (u: Unit): Unit => ({ ...u, dropIns: (u.dropIns ?? []).filter((d) => d.name !== envDropInName) });

/** The first rule of the policy that matches a cause, or undefined. */
function firstRule(policy: DisruptionPolicy, unit: string, file: string | undefined): PolicyRule | undefined {
  return policy.rules.find((r) => (r.units !== undefined ? r.units.includes(unit) : file !== undefined && ruleMatchesFile(r, file)));
}

/** Paths whose entries differ between the two OSCs (every host's entries: the planner already chose this host's). */
function changedPaths(old: Osc | undefined, cur: Osc): Set<string> {
  const byPath = (o: Osc | undefined): Map<string, OscFile[]> => {
    const m = new Map<string, OscFile[]>();
    for (const f of o === undefined ? [] : [...(o.spec.files ?? []), ...(o.status.extensionFiles ?? [])])
      m.set(f.path, [...(m.get(f.path) ?? []), f]);
    return m;
  };
  const a = byPath(old);
  const b = byPath(cur);
  const out = new Set<string>();
  // Moving a file between spec and status is no change (plan/diff.ts): entries compare in any order.
  const same = (x: OscFile[] | undefined, y: OscFile[]) =>
    x !== undefined && x.length === y.length && x.every((e) => y.some((f) => sameFile(e, f)));
  for (const [p, fs] of b) if (!same(a.get(p), fs)) out.add(p);
  for (const p of a.keys()) if (!b.has(p)) out.add(p);
  return out;
}

const containerdConfigPath = "/etc/containerd/config.toml";

const unitIn = (o: Osc | undefined, name: string): Unit | undefined =>
  o === undefined ? undefined : mergeUnits(o).find((x) => x.name === name);

/**
 * What a restart the planner asked for becomes under the policy. Each cause (the unit's own definition, each
 * changed file it lists, containerd's config) is matched on its own: first matching rule wins, no match is a
 * restart; the unit gets the strongest action of its causes. A new unit is always started, the agent always
 * restarts itself, and the policy file never causes anything.
 */
function governedRestart(u: string, input: DisruptionInput, files: Set<string>, why: string, configChanged = false): UnitDisruption {
  const { policy, osc, lastApplied } = input;
  if (policy === undefined || u === agentUnitName) return { unit: u, action: "restart", why };
  const now = unitIn(osc, u);
  const before = unitIn(lastApplied, u);
  // Not there before (also containerd's drop-in unit, which only the apply adds): started, whatever the policy.
  if (before === undefined) return { unit: u, action: "restart", why: "new unit" };
  const causes: { why: string; file?: string }[] = [];
  if (now !== undefined && before !== undefined && !semanticEqual(withoutEnvDropIn(before), withoutEnvDropIn(now)))
    causes.push({ why: "unit changed" });
  for (const p of now?.filePaths ?? []) {
    if (files.has(p) && p !== disruptionPolicyPath) causes.push({ why: `file ${p} changed`, file: p });
  }
  if (configChanged) causes.push({ why: "containerd config changed", file: containerdConfigPath });
  if (causes.length === 0) {
    if ((now?.filePaths ?? []).includes(disruptionPolicyPath) && files.has(disruptionPolicyPath))
      return { unit: u, action: "none", why: `file ${disruptionPolicyPath} changed` };
    // Nothing more specific is known (a unit the OSC does not list): matched by name only.
    causes.push({ why });
  }
  let best: UnitDisruption | undefined;
  for (const c of causes) {
    const rule = firstRule(policy, u, c.file);
    const action = rule?.action ?? "restart";
    if (best === undefined || strength[action] > strength[best.action as PolicyAction])
      best = rule === undefined ? { unit: u, action, why: c.why } : { unit: u, action, why: c.why, rule };
  }
  return best as UnitDisruption;
}

/** Some unit's definition (content, drop-ins, enablement) differs, or a unit came or went: systemd must re-read them. */
export function unitDefinitionsChanged(osc: Osc, lastApplied: Osc | undefined): boolean {
  const defs = (o: Osc | undefined) => (o === undefined ? [] : mergeUnits(o).map(withoutEnvDropIn));
  const a = defs(lastApplied);
  const b = defs(osc);
  return (
    a.length !== b.length ||
    b.some(
      (u) =>
        !semanticEqual(
          a.find((x) => x.name === u.name),
          u,
        ),
    )
  );
}

const inPlaceSteps = (c: OscChanges): string[] => {
  const ip = c.inPlaceUpdates;
  return [
    ip.operatingSystem ? "operating system update" : "",
    ip.kubelet.minorVersion ? "kubelet minor version update" : "",
    ip.kubelet.config ? "kubelet configuration update" : "",
    ip.kubelet.cpuManagerPolicy ? "kubelet CPU manager policy update" : "",
    ip.certificateAuthoritiesRotation.kubelet || ip.certificateAuthoritiesRotation.nodeAgent ? "certificate authority rotation" : "",
    ip.serviceAccountKeyRotation ? "service account key rotation" : "",
  ].filter((s) => s !== "");
};

/**
 * Whether applying `changes` disturbs the node, and what it does to each unit: unit commands (restart → the
 * policy's action, stop stays a stop), containerd's restart for a changed config, removed units (stop, or a
 * restart of an OS-provided unit), the agent's own restart, and in-place steps. Pure: reads nothing.
 */
export function assessDisruption(input: DisruptionInput): DisruptionAssessment {
  const { changes } = input;
  const files = changedPaths(input.lastApplied, input.osc);
  const units: UnitDisruption[] = [];
  for (const { name, command } of changes.units.commands) {
    if (command === "stop") units.push({ unit: name, action: "stop", why: "unit stopped or disabled" });
    else if (command === "restart") {
      const config = name === containerdUnitName && changes.containerd.configFileChanged;
      units.push(governedRestart(name, input, files, "unit or its files changed", config));
    }
  }
  if (changes.containerd.configFileChanged && !changes.units.commands.some((c) => c.name === containerdUnitName))
    units.push(governedRestart(containerdUnitName, input, files, "containerd config changed", true));
  for (const u of changes.units.deleted) {
    // Created by the agent: stopped and removed; OS-provided: restarted to drop the removed drop-ins (apply/units.ts).
    if (u.content !== undefined) units.push({ unit: u.name, action: "stop", why: "unit removed" });
    else units.push(governedRestart(u.name, input, files, "unit removed from the config"));
  }
  const inPlace = inPlaceSteps(changes);
  const disruptive = inPlace.length > 0 || units.some((u) => u.action === "restart" || u.action === "stop");
  return { disruptive, units, inPlace };
}
