import type { Osc } from "../../../osc/index.ts";

/**
 * 9.4 SkipWritingStateFiles: applying the *provision* OSC of a self-hosted machine writes neither
 * state file and never restarts the agent; a reconcile OSC is applied as everywhere else.
 */
export function skipsStateFiles(selfHosted: boolean | undefined, osc: Osc): boolean {
  return selfHosted === true && osc.spec.purpose === "provision";
}
