import type { KubeObject } from "../../../../kube/index.ts";
import type { Osc } from "../../../../osc/index.ts";
import { policyUnitJobs } from "../../apply/policy-jobs.ts";
import type { ApplyPorts } from "../../apply/ports.ts";
import { restoreChanges } from "../../apply/restore.ts";
import { activePolicy, effectiveDisruptionPolicy } from "../../plan/disruption-policy.ts";
import type { DriftItem } from "./detect.ts";
import { repairChanges } from "./repair-plan.ts";

/**
 * Restores what drifted, under the apply lock (the caller holds it); returns the units restarted. Loaded by
 * import() on the first repair (runner.ts): a node that never drifts never evaluates the restore path.
 */
export async function repairDrift(
  osc: ApplyPorts,
  found: { readonly lastApplied: Osc; readonly items: readonly DriftItem[]; readonly hostName: string; readonly node: KubeObject },
  signal: AbortSignal,
): Promise<readonly string[]> {
  const { lastApplied, items, hostName, node } = found;
  const { changes, asFound } = repairChanges(lastApplied, items, hostName);
  // The restarts follow the disruption policy as an apply's do (an invalid one is ignored; the apply warns).
  const policy = activePolicy(await effectiveDisruptionPolicy(osc.host, lastApplied, lastApplied, hostName));
  const unitJobs = policy === undefined ? undefined : policyUnitJobs({ osc: lastApplied, lastApplied: asFound, policy });
  return restoreChanges(osc, changes, node, signal, unitJobs);
}
