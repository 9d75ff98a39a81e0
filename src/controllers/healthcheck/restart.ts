import type { KubeObject } from "../../kube/index.ts";
import { errorText } from "../../log/index.ts";
import { SystemdJobError, type Systemd } from "../../systemd/index.ts";
import { type EventRecorder, nodeRef } from "../events.ts";

/**
 * `systemctl restart <unit>` with upstream's D-Bus event (controllers.md §2): a finished job is
 * recorded on the Node as `SystemDUnitRestart` (Warning when it did not end "done"); a job that
 * could not even be submitted records nothing. Errors are rethrown unchanged.
 */
export async function restartUnit(
  deps: { readonly systemd: Systemd; readonly events: EventRecorder },
  node: KubeObject,
  unit: string,
  signal: AbortSignal,
): Promise<void> {
  try {
    await deps.systemd.restart(unit, signal);
  } catch (err) {
    if (err instanceof SystemdJobError) {
      await deps.events.event(
        nodeRef(node),
        "Warning",
        "SystemDUnitRestart",
        "restart",
        `processed restart of unit ${unit} failed with error ${errorText(err)}`,
      );
    }
    throw err;
  }
  await deps.events.event(nodeRef(node), "Normal", "SystemDUnitRestart", "restart", `processed restart of unit ${unit}`);
}
