import type { Osc, OscChanges } from "../../../osc/index.ts";
import { type DisruptionAssessment, assessDisruption, unitDefinitionsChanged } from "../plan/disruption.ts";
import type { DisruptionPolicy } from "../plan/disruption-policy.ts";
import type { UnitJobs } from "./context.ts";

/**
 * The unit jobs of a valid disruption policy (issue 26) for bringing the host from `lastApplied` to `osc`:
 * each restart as the policy says, and the daemon-reload only where a unit definition changed or an action needs one.
 */
export function policyUnitJobs(input: {
  readonly osc: Osc;
  readonly lastApplied: Osc | undefined;
  readonly policy: DisruptionPolicy;
}): UnitJobs {
  // Both jobs ask about the same change set: assessed once per change set.
  const assessed = new WeakMap<OscChanges, DisruptionAssessment>();
  const assess = (changes: OscChanges): DisruptionAssessment => {
    let a = assessed.get(changes);
    if (a === undefined) assessed.set(changes, (a = assessDisruption({ changes, ...input })));
    return a;
  };
  return {
    actions: (changes) => new Map(assess(changes).units.map((u) => [u.unit, u])),
    // systemd re-reads unit files only for a changed unit or a daemon-reload action; a job alone needs none.
    daemonReload: (changes) =>
      unitDefinitionsChanged(input.osc, input.lastApplied) || assess(changes).units.some((u) => u.action === "daemon-reload"),
  };
}
