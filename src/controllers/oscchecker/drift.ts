import type { OscChanges } from "../../osc/index.ts";
import type { Finding } from "./findings.ts";
import type { CheckedOsc } from "./last-applied.ts";

/** A finding with what it is about: a file path or a unit name. */
export interface Drift {
  readonly finding: Finding;
  readonly subject: string;
}

/** What an unfinished change set is about to write or remove: not drift, work in progress. */
export interface PendingWork {
  readonly paths: ReadonlySet<string>;
  readonly units: ReadonlySet<string>;
}

export const noPendingWork: PendingWork = { paths: new Set(), units: new Set() };

/** The files and units `last-computed-osc-changes.yaml` still lists (changed or deleted). */
export function pendingWork(changes: OscChanges): PendingWork {
  const { files, units } = changes;
  return {
    paths: new Set([...files.changed, ...files.deleted].map((f) => f.path)),
    units: new Set([...units.changed, ...units.deleted].map((u) => u.name)),
  };
}

/** The last-applied view without what the change set will rewrite anyway (dependencies included). */
export function withoutPending(osc: CheckedOsc, pending: PendingWork): CheckedOsc {
  if (pending.paths.size === 0 && pending.units.size === 0) return osc;
  return {
    files: osc.files.filter((f) => !pending.paths.has(f.path)),
    units: osc.units
      .filter((u) => !pending.units.has(u.name))
      .map((u) => ({ ...u, filePaths: u.filePaths.filter((p) => !pending.paths.has(p)) })),
  };
}

/** At most this many subjects are named in an aggregated event. */
const maxListedSubjects = 20;
/** core/v1 keeps any message, but events.k8s.io notes stop at 1 kB: stay below with the list. */
const listBudget = 800;
/** The reason of an aggregated event whose findings have different reasons. */
const mixedDriftReason = "OSCDrift";

/**
 * One event for all drift: a single finding keeps upstream's reason and text; several become one
 * Warning naming the count, the reasons and up to 20 subjects (fewer when they are long).
 */
export function aggregateDrift(drifts: readonly Drift[]): Finding | undefined {
  const first = drifts[0];
  if (first === undefined) return undefined;
  if (drifts.length === 1) return first.finding;
  const subjects = [...new Set(drifts.map((d) => d.subject))];
  const reasons = new Map<string, number>();
  for (const d of drifts) reasons.set(d.finding.reason, (reasons.get(d.finding.reason) ?? 0) + 1);
  const listed: string[] = [];
  let length = 0;
  for (const s of subjects) {
    if (listed.length === maxListedSubjects || length + s.length > listBudget) break;
    listed.push(s);
    length += s.length + 2;
  }
  const more = subjects.length - listed.length;
  const counts = [...reasons].map(([r, n]) => `${r}: ${n}`).join(", ");
  return {
    reason: reasons.size === 1 ? first.finding.reason : mixedDriftReason,
    message: `${subjects.length} files or units differ from the last applied OSC (${counts}): ${listed.join(", ")}${more > 0 ? ` and ${more} more` : ""}`,
  };
}
