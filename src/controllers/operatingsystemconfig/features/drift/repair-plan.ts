import { emptyChanges, type Osc, type OscChanges, type OscFile, type Unit } from "../../../../osc/index.ts";
import { agentUnitName } from "../../constants.ts";
import { computeFileDiff, computeUnitDiff } from "../../plan/diff.ts";
import { allFiles, mergeUnits } from "../../plan/merge.ts";
import type { DriftItem } from "./detect.ts";

/** Content no OSC has: a drifted item always differs from what last-applied asks for. */
const drifted = "# gardener-node-agent: drifted from the last-applied operating system config\n";

/**
 * The change set that repairs `items`, by the controller's own change computation as if exactly the
 * drifted parts differed from last-applied (so the same units restart as for an OSC change). Enablement
 * drift does not restart; the agent's own unit is never restarted by a repair. `asFound`: last-applied
 * with the drifted parts marked, the host as the repair starts from (what a disruption policy compares).
 */
export function repairChanges(
  lastApplied: Osc,
  items: readonly DriftItem[],
  hostName: string,
): { readonly changes: OscChanges; readonly asFound: Osc } {
  const files = new Set(items.filter((i) => i.type === "file").map((i) => i.path));
  const unitFiles = new Set(items.flatMap((i) => (i.type === "unit" ? [i.unit] : [])));
  const dropIns = new Set(items.flatMap((i) => (i.type === "dropIn" ? [`${i.unit}/${i.dropIn}`] : [])));
  const enablement = new Set(items.flatMap((i) => (i.type === "enablement" ? [i.unit] : [])));

  const markFile = (f: OscFile): OscFile => (files.has(f.path) ? { ...f, content: { inline: { encoding: "", data: drifted } } } : f);
  const markUnit = (u: Unit): Unit => {
    const m: Unit = { ...u };
    if (unitFiles.has(u.name)) m.content = drifted;
    if (u.dropIns !== undefined) m.dropIns = u.dropIns.map((d) => (dropIns.has(`${u.name}/${d.name}`) ? { ...d, content: drifted } : d));
    return m;
  };
  const asFound: Osc = {
    ...lastApplied,
    spec: { ...lastApplied.spec, files: allFiles(lastApplied, hostName).map(markFile), units: mergeUnits(lastApplied).map(markUnit) },
    status: { ...lastApplied.status, extensionFiles: [], extensionUnits: [] },
  };

  const c = emptyChanges("drift-repair");
  c.files = computeFileDiff(asFound, lastApplied, hostName);
  c.units = computeUnitDiff(asFound, lastApplied, c.files.changed);
  c.units.commands = c.units.commands.filter((cmd) => cmd.name !== agentUnitName);
  for (const u of mergeUnits(lastApplied)) {
    if (enablement.has(u.name) && !c.units.changed.some((x) => x.name === u.name)) {
      c.units.changed.push({ ...u, dropInsChanges: { changed: [], deleted: [] } });
    }
  }
  return { changes: c, asFound };
}
