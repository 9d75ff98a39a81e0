import type { KubeObject } from "../../../../kube/index.ts";
import type { OscChanges } from "../../../../osc/index.ts";
import type { Gauge } from "../../../../server/index.ts";
import { nodeRef } from "../../../events.ts";
import type { ApplyLock } from "../../apply/apply-lock.ts";
import type { ApplyPorts } from "../../apply/ports.ts";
import { policyUnitJobs } from "../../apply/policy-jobs.ts";
import { activePolicy, effectiveDisruptionPolicy } from "../../plan/disruption-policy.ts";
import { readChanges, readLastApplied } from "../../plan/state.ts";
import { detectDrift, type DriftItem, driftLabels, nameSome } from "./detect.ts";
import { repairChanges } from "./repair-plan.ts";
import { restoreChanges } from "../../apply/restore.ts";
import { driftPolicyOf, type DriftStatus } from "./status.ts";
import { errorText } from "../../../../log/index.ts";

const driftDetectedReason = "DriftDetected";
const driftRepairedReason = "DriftRepaired";
const driftRepairFailedReason = "DriftRepairFailed";
export const driftPathsMetric = "gardener_node_agent_drift_paths";

export interface DriftRunnerDeps {
  readonly osc: ApplyPorts;
  readonly lock: ApplyLock;
  readonly status: DriftStatus;
  /** The own Node (cached read); undefined while it is not registered. */
  readonly readNode: (signal: AbortSignal) => Promise<KubeObject | undefined>;
  /** gardener_node_agent_drift_paths */
  readonly gauge?: Gauge;
}

export type DriftPassOutcome =
  | { readonly kind: "skipped"; readonly why: string }
  | { readonly kind: "clean" }
  | { readonly kind: "reported"; readonly items: readonly DriftItem[] }
  | {
      readonly kind: "repaired";
      readonly items: readonly DriftItem[];
      readonly restarted: readonly string[];
      readonly remaining: readonly DriftItem[];
    };

/** A change set with work left (or our record of attempted writes) means an apply did not finish. */
function applyUnfinished(c: OscChanges | undefined): boolean {
  if (c === undefined) return false;
  const u = c.units;
  return (
    c.attemptedWrites !== undefined ||
    c.mustRestartNodeAgent ||
    c.files.changed.length + c.files.deleted.length + u.changed.length + u.deleted.length + u.commands.length > 0
  );
}

/**
 * One drift pass: compare without the apply lock (never delays an apply), report, and with drift-policy
 * `repair` restore under the lock. Only against a completely applied OSC and a known Node.
 */
async function driftPass(d: DriftRunnerDeps, signal: AbortSignal): Promise<DriftPassOutcome> {
  const { host, log, events, clock } = d.osc;
  const node = await d.readNode(signal);
  if (node === undefined) return { kind: "skipped", why: "node not registered" };
  const generation = d.lock.generation;
  if (d.lock.busy) return { kind: "skipped", why: "an apply is running" };
  const lastApplied = await readLastApplied(host);
  if (lastApplied === undefined) return { kind: "skipped", why: "nothing applied yet" };
  if (applyUnfinished(await readChanges(host))) return { kind: "skipped", why: "an apply is unfinished" };
  const hostName = d.osc.node.hostName.toLowerCase();
  const items = await detectDrift(d.osc, lastApplied, hostName, signal);
  if (d.lock.busy || d.lock.generation !== generation) return { kind: "skipped", why: "an apply ran during the check" };

  const policy = driftPolicyOf(node);
  const found = driftLabels(items);
  d.gauge?.set(items.length);
  d.status.record({ at: clock.now(), found, policy });
  if (items.length === 0) return { kind: "clean" };
  const message = `${items.length} managed path(s) differ from the last-applied operating system config: ${nameSome(found)}`;
  log.info("Drift from the last-applied operating system config", { paths: items.length, policy });
  await events.event(nodeRef(node), "Warning", driftDetectedReason, "Check", message);
  if (policy !== "repair") return { kind: "reported", items };

  try {
    const outcome = await d.lock.exclusive(async () => {
      if (d.lock.generation !== generation) return undefined; // an apply won the race for the lock
      const { changes, asFound } = repairChanges(lastApplied, items, hostName);
      // The restarts follow the disruption policy as an apply's do (an invalid one is ignored; the apply warns).
      const policy = activePolicy(await effectiveDisruptionPolicy(host, lastApplied, lastApplied, hostName));
      const unitJobs = policy === undefined ? undefined : policyUnitJobs({ osc: lastApplied, lastApplied: asFound, policy });
      const restarted = await restoreChanges(d.osc, changes, node, signal, unitJobs);
      const remaining = await detectDrift(d.osc, lastApplied, hostName, signal);
      return { restarted, remaining };
    });
    if (outcome === undefined) return { kind: "skipped", why: "an apply ran before the repair" };
    const { restarted, remaining } = outcome;
    d.gauge?.set(remaining.length);
    d.status.record({ at: clock.now(), found, policy, repair: { restarted, remaining: remaining.length } });
    const units = restarted.length > 0 ? `; restarted: ${restarted.join(", ")}` : "";
    const left = remaining.length > 0 ? `; still differing: ${nameSome(driftLabels(remaining))}` : "";
    await events.event(nodeRef(node), "Normal", driftRepairedReason, "Repair", `restored ${nameSome(found)}${units}${left}`);
    log.info("Repaired drift", { paths: items.length, restarted: restarted.join(","), remaining: remaining.length });
    return { kind: "repaired", items, restarted, remaining };
  } catch (err) {
    if (signal.aborted) throw err;
    const why = errorText(err);
    d.status.record({ at: clock.now(), found, policy, repair: { failed: why } });
    await events.event(nodeRef(node), "Warning", driftRepairFailedReason, "Repair", `failed repairing drift: ${why}`);
    throw err;
  }
}

/** A pass at start, then one every `periodMs`, until `signal` aborts. A failed pass is logged, never fatal. */
export async function runDriftLoop(d: DriftRunnerDeps, periodMs: number, signal: AbortSignal): Promise<void> {
  const { log, clock } = d.osc;
  while (!signal.aborted) {
    try {
      const outcome = await driftPass(d, signal);
      if (outcome.kind === "skipped") log.debug("Drift check skipped", { why: outcome.why });
    } catch (err) {
      if (signal.aborted) return;
      log.error("Drift check failed", { error: errorText(err) });
    }
    try {
      await clock.sleep(periodMs, signal);
    } catch {
      return; // stopping
    }
  }
}
