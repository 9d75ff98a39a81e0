import type { OscChanges } from "../../../osc/index.ts";
import { containerdUnitName } from "../constants.ts";

/** What an apply is about to do, counted from its change set before the first step. */
export interface ChangeSummary {
  readonly filesChanged: number;
  readonly filesDeleted: number;
  /** Units restarted by unit commands, plus containerd when its configuration changed. */
  readonly unitsRestarted: readonly string[];
}

export const checksumPrefix = (checksum: string): string => checksum.slice(0, 12);

/** Counts a change set (as computed or resumed) the way the history, the hold message and `status` report it. */
export function summarizeChanges(changes: OscChanges): ChangeSummary {
  const restarted = changes.units.commands.filter((c) => c.command === "restart").map((c) => c.name);
  if (changes.containerd.configFileChanged && !restarted.includes(containerdUnitName)) restarted.push(containerdUnitName);
  return { filesChanged: changes.files.changed.length, filesDeleted: changes.files.deleted.length, unitsRestarted: restarted };
}

/** Under a disruption policy the history and `status` name only the units really restarted. */
export function restartsOnly(summary: ChangeSummary, actions: ReadonlyMap<string, { readonly action: string }> | undefined): ChangeSummary {
  if (actions === undefined) return summary;
  return { ...summary, unitsRestarted: summary.unitsRestarted.filter((u) => (actions.get(u)?.action ?? "restart") === "restart") };
}
