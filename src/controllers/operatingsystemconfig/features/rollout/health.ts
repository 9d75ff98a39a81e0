import { findCondition, type KubeObject } from "../../../../kube/index.ts";
import type { Osc } from "../../../../osc/index.ts";
import type { RolloutTimings } from "./timings.ts";

/** Whether a verifying node may release its slot, must keep waiting, or failed its change. */
export type HealthVerdict =
  | { readonly kind: "healthy" }
  | { readonly kind: "pending"; readonly why: string; readonly recheckInMs: number }
  | { readonly kind: "failed"; readonly why: string };

/**
 * systemd-unit-check judges only an OSC with units: with none it writes no SystemdUnitsReady condition
 * (controllers.md §10 step 2), so a rollout of such an OSC waits for Ready alone.
 */
export const unitsChecked = (osc: Osc): boolean => (osc.spec.units?.length ?? 0) + (osc.status?.extensionUnits?.length ?? 0) > 0;

const time = (s: string | undefined): number => (s === undefined ? NaN : Date.parse(s));

/**
 * Issue 16: `Ready` and `SystemdUnitsReady` True, judged since the change, for `healthyForMs`; not
 * healthy `verifyTimeoutMs` after the slot was taken → failed.
 */
export function verifyHealth(
  node: KubeObject,
  takenMs: number,
  verifyingSinceMs: number,
  nowMs: number,
  t: RolloutTimings,
  unitsChecked = true,
): HealthVerdict {
  const ready = findCondition(node, "Ready");
  const units = findCondition(node, "SystemdUnitsReady");
  let why: string | undefined;
  let healthySince = verifyingSinceMs;
  if (ready?.status !== "True") why = "kubelet is not Ready";
  else if (!unitsChecked) healthySince = Math.max(verifyingSinceMs, time(ready.lastTransitionTime) || 0);
  else if (units === undefined || !(time(units.lastHeartbeatTime) >= Math.floor(verifyingSinceMs / 1000) * 1000)) {
    why = "the systemd unit check has not judged the changed units yet";
  } else if (units.status !== "True") why = `systemd units are not ready: ${units.message ?? units.reason ?? ""}`;
  else healthySince = Math.max(verifyingSinceMs, time(ready.lastTransitionTime) || 0, time(units.lastTransitionTime) || 0);

  if (why === undefined && nowMs - healthySince >= t.healthyForMs) return { kind: "healthy" };
  if (nowMs - takenMs >= t.verifyTimeoutMs) {
    return {
      kind: "failed",
      why: `not healthy ${Math.round(t.verifyTimeoutMs / 1000)}s after the change: ${why ?? "healthy too briefly"}`,
    };
  }
  // Healthy so far: one look when the window ends is enough (a flap in between moves a lastTransitionTime, which it sees).
  const left = why === undefined ? t.healthyForMs - (nowMs - healthySince) : t.verifyPollMs;
  return {
    kind: "pending",
    why: why ?? `healthy for ${Math.floor((nowMs - healthySince) / 1000)}s of ${Math.round(t.healthyForMs / 1000)}s`,
    recheckInMs: Math.max(100, left),
  };
}
