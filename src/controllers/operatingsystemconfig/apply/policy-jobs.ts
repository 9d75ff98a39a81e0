import type { Osc, OscChanges } from "../../../osc/index.ts";
import { assessDisruption, unitDefinitionsChanged } from "../plan/disruption.ts";
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
  const assess = (changes: OscChanges) => assessDisruption({ changes, ...input });
  return {
    actions: (changes) => new Map(assess(changes).units.map((u) => [u.unit, u])),
    // systemd re-reads unit files only for a changed unit or a daemon-reload action; a job alone needs none.
    daemonReload: (changes) =>
      unitDefinitionsChanged(input.osc, input.lastApplied) || assess(changes).units.some((u) => u.action === "daemon-reload"),
  };
}
