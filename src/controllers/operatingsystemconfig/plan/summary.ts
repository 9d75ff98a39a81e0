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
