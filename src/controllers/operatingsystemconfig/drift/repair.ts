import type { KubeObject } from "../../../kube/types.ts";
import type { OscChanges } from "../../../osc/index.ts";
import { ChangesStore } from "../changes-store.ts";
import { type ApplyContext, step } from "../context.ts";
import type { OscControllerDeps } from "../deps.ts";
import { writeChangedFiles, writeImageFiles } from "../files.ts";
import { planChanges } from "../plan.ts";
import { applyChangedUnits, executeUnitCommands } from "../units.ts";

/**
 * Carries out a repair change set with the apply's own steps: files (inline decoded, secretRef fetched
 * again, imageRef pulled) written atomically, unit files and drop-ins, enablement, daemon-reload, then
 * the unit commands. Nothing is persisted: an interrupted repair is found as drift again next pass.
 * Returns the units that were restarted or stopped.
 */
export async function repairDrift(deps: OscControllerDeps, changes: OscChanges, node: KubeObject | undefined, signal: AbortSignal): Promise<string[]> {
  const commanded = changes.units.commands.map((c) => c.name);
  const store = new ChangesStore(changes, async () => undefined);
  const ctx: ApplyContext = { deps, store, node, signal };
  const planned = await step("failed reading drifted files' content", () => planChanges(deps.kube, changes, deps.arch, signal));
  await step("failed restoring drifted files", () => writeChangedFiles(ctx, planned));
  await step("failed restoring drifted image files", () => writeImageFiles(ctx));
  await step("failed restoring drifted units", () => applyChangedUnits(ctx));
  await step("failed reloading systemd daemon", () => deps.systemd.daemonReload(signal));
  await step("failed restarting units of drifted paths", () => executeUnitCommands(ctx));
  return commanded;
}
