import type { KubeObject } from "../../../kube/index.ts";
import type { ChangesStore } from "./changes-store.ts";
import type { ApplyPorts } from "./ports.ts";

/** What every apply step gets: the ports, the pending work list, the Node (if known) and the deadline. */
export interface StepContext {
  readonly ports: ApplyPorts;
  readonly store: ChangesStore;
  /** undefined while the machine is not registered yet (no events then). */
  readonly node: KubeObject | undefined;
  readonly signal: AbortSignal;
}
