import * as v from "valibot";
import { kubeTime } from "../../../kube/index.ts";
import { type ChangeSummary, checksumPrefix } from "../plan/summary.ts";

/** Node annotation holding the last applies as compact JSON (newest last). */
export const applyHistoryAnnotation = "node-agent.gardener.cloud/apply-history";
const historyLength = 5;
/** Annotations are shared by many writers; ours stays small whatever the OSC looks like. */
const historyMaxBytes = 2048;
/** Units listed per entry before the rest are only counted. */
const unitsListed = 3;

export type { ChangeSummary };
export type ApplyOutcome = "Applied" | "Failed";

const entrySchema = v.object({
  checksum: v.string(),
  start: v.string(),
  durationMs: v.number(),
  filesChanged: v.number(),
  filesDeleted: v.number(),
  unitsRestarted: v.array(v.string()),
  /** Restarted units not listed (kept short for the size bound). */
  moreUnits: v.optional(v.number()),
  outcome: v.picklist(["Applied", "Failed"]),
});
export type HistoryEntry = v.InferOutput<typeof entrySchema>;

/** One history entry; the restarted units beyond the first three are only counted. */
export function historyEntry(
  checksum: string,
  startMs: number,
  durationMs: number,
  summary: ChangeSummary | undefined,
  outcome: ApplyOutcome,
): HistoryEntry {
  const units = summary?.unitsRestarted ?? [];
  return {
    checksum: checksumPrefix(checksum),
    start: kubeTime(startMs),
    durationMs: Math.round(durationMs),
    filesChanged: summary?.filesChanged ?? 0,
    filesDeleted: summary?.filesDeleted ?? 0,
    unitsRestarted: units.slice(0, unitsListed),
    ...(units.length > unitsListed ? { moreUnits: units.length - unitsListed } : {}),
    outcome,
  };
}

/** The entries of an annotation value; anything unreadable (hand-edited, another writer) counts as empty. */
export function parseHistory(text: string | undefined): HistoryEntry[] {
  if (text === undefined || text === "") return [];
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    // An unreadable history is replaced, not an error: it is a report, not state the apply depends on.
    return [];
  }
  const parsed = v.safeParse(v.array(v.unknown()), raw);
  if (!parsed.success) return [];
  return parsed.output.flatMap((e) => {
    const r = v.safeParse(entrySchema, e);
    return r.success ? [r.output] : [];
  });
}

/**
 * The annotation value after `entry`: the last five applies, oldest first, at most 2 KB. Entries are
 * shortened first (unit names only counted), then the oldest dropped; the newest always stays.
 */
export function appendHistory(existing: string | undefined, entry: HistoryEntry): string {
  let entries = [...parseHistory(existing), entry].slice(-historyLength);
  let text = JSON.stringify(entries);
  if (byteLength(text) <= historyMaxBytes) return text;
  entries = entries.map((e) => (e.unitsRestarted.length === 0 ? e : countOnly(e)));
  text = JSON.stringify(entries);
  while (byteLength(text) > historyMaxBytes && entries.length > 1) {
    entries = entries.slice(1);
    text = JSON.stringify(entries);
  }
  return text;
}

const byteLength = (s: string): number => new TextEncoder().encode(s).length;

function countOnly(e: HistoryEntry): HistoryEntry {
  const { unitsRestarted, moreUnits, ...rest } = e;
  return { ...rest, unitsRestarted: [], moreUnits: unitsRestarted.length + (moreUnits ?? 0) };
}
