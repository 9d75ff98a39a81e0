import { RestartRequested, TerminalError, type KubeObject } from "../../kube/index.ts";
import { errorText } from "../../log/index.ts";
import { nodeRef } from "../events.ts";
import type { OscControllerDeps } from "./deps.ts";
import type { LabelPatch } from "./input/label-patch.ts";
import { permanentInputError } from "./plan/input-error.ts";
import type { ApplyRun } from "./report/reporter.ts";
import type { Reservation } from "./gates/gate.ts";
import { abandonReserved } from "./gates/run.ts";

export interface FailedApply {
  readonly run: ApplyRun;
  readonly labels: LabelPatch;
  /** What the admit-phase gates took (a rollout slot is marked failed when a restarted unit failed). */
  readonly reservations: readonly Reservation[];
  readonly node: KubeObject | undefined;
}

/**
 * Reports an apply that threw and returns the error the reconcile throws. RestartRequested (the agent
 * continues after a restart) stays Applying with no Warning; the label patch's own failure means no apply
 * was attempted (no slot change, no event); a permanent input error becomes a TerminalError.
 */
export async function applyFailed(deps: OscControllerDeps, failed: FailedApply, err: unknown, signal: AbortSignal): Promise<unknown> {
  const { run, labels, reservations, node } = failed;
  const restarting = err instanceof RestartRequested;
  if (!restarting) await run.failed(node, err, signal);
  if (await labels.isItsFailure(err)) return err;
  await abandonReserved(reservations, err, node, signal);
  if (!restarting && node !== undefined) await deps.events.event(nodeRef(node), "Warning", "OSCApplyFailed", "Reconcile", errorText(err));
  if (permanentInputError(err)) return new TerminalError(errorText(err), { cause: err });
  return err;
}
