import type { KubeObject } from "../../../kube/index.ts";
import type { OscChanges } from "../../../osc/index.ts";
import type { UnitDisruption } from "../plan/disruption.ts";
import type { ChangesStore } from "./changes-store.ts";
import type { ApplyPorts } from "./ports.ts";

/** What the apply's unit jobs become under a disruption policy (issue 26), asked for the work left in the change set. */
export interface UnitJobs {
  /** Per unit its action; a unit absent here is restarted or stopped as the change set says. */
  actions(changes: OscChanges): ReadonlyMap<string, UnitDisruption>;
  /** false: the daemon-reload after the unit files is left out (no unit definition changed, no action needs one). */
  daemonReload(changes: OscChanges): boolean;
}

/** What every apply step gets: the ports, the pending work list, the Node (if known) and the deadline. */
export interface StepContext {
  readonly ports: ApplyPorts;
  readonly store: ChangesStore;
  /** undefined while the machine is not registered yet (no events then). */
  readonly node: KubeObject | undefined;
  readonly signal: AbortSignal;
  /** Set by an extension with a disruption policy; without it every restart is a restart (upstream). */
  readonly unitJobs?: UnitJobs;
}
