import type { KubeObject } from "../../../kube/index.ts";
import type { OscChanges } from "../../../osc/index.ts";
import { ChangesStore } from "./changes-store.ts";
import { step } from "../../../log/index.ts";
import type { StepContext, UnitJobs } from "./context.ts";
import type { ApplyPorts } from "./ports.ts";
import { deleteRemovedFiles, writeChangedFiles, writeImageFiles } from "./files.ts";
import { planChanges } from "../plan/content.ts";
import { applyChangedUnits, executeUnitCommands } from "./units.ts";

/**
 * Brings parts of the host back to a known OSC (drift repair, unit revert) with the apply's own steps;
 * `unitJobs`: a disruption policy's actions for the restarts, as in an apply. Nothing is persisted here
 * (the caller decides what survives a crash); returns the units restarted or stopped.
 */
export async function restoreChanges(
  deps: ApplyPorts,
  changes: OscChanges,
  node: KubeObject | undefined,
  signal: AbortSignal,
  unitJobs?: UnitJobs,
): Promise<string[]> {
  const actions = unitJobs?.actions(changes);
  const commanded = changes.units.commands
    .filter((c) => ["restart", "stop"].includes(actions?.get(c.name)?.action ?? "restart"))
    .map((c) => c.name);
  const daemonReload = unitJobs?.daemonReload(changes) ?? true;
  const store = new ChangesStore(changes, async () => undefined);
  const ctx: StepContext = { ports: deps, store, node, signal, ...(unitJobs !== undefined ? { unitJobs } : {}) };
  const planned = await step("failed reading the content to restore", () => planChanges(deps.kube, changes, deps.arch, signal));
  await step("failed restoring files", () => writeChangedFiles(ctx, planned));
  await step("failed restoring image files", () => writeImageFiles(ctx));
  await step("failed restoring units", () => applyChangedUnits(ctx));
  if (daemonReload) await step("failed reloading systemd daemon", () => deps.systemd.daemonReload(signal));
  await step("failed restarting restored units", () => executeUnitCommands(ctx));
  await step("failed removing files", () => deleteRemovedFiles(ctx));
  return commanded;
}
