import type { KubeObject } from "../../kube/index.ts";
import type { ChangesStore } from "./changes-store.ts";
import type { OscControllerDeps } from "./deps.ts";

/** What every apply step gets: the dependencies, the pending work list, the Node (if known) and the deadline. */
export interface ApplyContext {
  readonly deps: OscControllerDeps;
  readonly store: ChangesStore;
  /** undefined while the machine is not registered yet (no events then). */
  readonly node: KubeObject | undefined;
  readonly signal: AbortSignal;
}

/** Rethrows with a lowercase message naming the step, keeping the original as `cause` (G6). */
export async function step<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw new StepError(what, err);
  }
}

export class StepError extends Error {
  override readonly name = "StepError";
  constructor(
    readonly step: string,
    cause: unknown,
  ) {
    super(`${step}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}
