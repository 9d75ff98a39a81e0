import type { AttemptedWrites, DropIn, Osc, OscChanges, OscFile, Unit } from "../../../osc/index.ts";
import type { HostFs } from "../../../host/index.ts";
import { computeFileDiff, computeUnitDiff, resumeOrCompute } from "./diff.ts";
import { allFiles, mergeUnits } from "./merge.ts";
import { readChanges } from "./state.ts";

/**
 * gardener#10972: a half-failed apply may leave files and units of an OSC that never became last-applied.
 * Each change set records `attemptedWrites`; the next one marks them "unknown on disk", so unlisted ones
 * are removed and listed ones rewritten. The record is dropped when an apply completes.
 */

/** Content no OSC can have: an attempted item always differs from what the new OSC asks for. */
const unknownOnDisk = "# gardener-node-agent: unknown content, written by an unfinished apply\n";

function syntheticOld(lastApplied: Osc | undefined, attempted: AttemptedWrites, hostName: string): Osc {
  const files = new Map<string, OscFile>((lastApplied === undefined ? [] : allFiles(lastApplied, hostName)).map((f) => [f.path, f]));
  for (const { path } of attempted.files) files.set(path, { path, content: { inline: { encoding: "", data: unknownOnDisk } } });
  const units = new Map<string, Unit>((lastApplied === undefined ? [] : mergeUnits(lastApplied)).map((u) => [u.name, u]));
  for (const a of attempted.units) {
    const before = units.get(a.name);
    const dropIns = unionDropIns(before?.dropIns, a.dropIns).map((d) => ({ name: d.name, content: unknownOnDisk }));
    const marked: Unit = { name: a.name };
    if (a.content !== undefined || before?.content !== undefined) marked.content = unknownOnDisk;
    if (dropIns.length > 0) marked.dropIns = dropIns;
    const filePaths = before?.filePaths ?? a.filePaths;
    if (filePaths !== undefined) marked.filePaths = filePaths;
    units.set(a.name, marked);
  }
  const base: Osc = lastApplied ?? ({ spec: {}, status: {} } as Osc);
  return {
    ...base,
    spec: { ...base.spec, files: [...files.values()], units: [...units.values()] },
    status: { ...base.status, extensionFiles: [], extensionUnits: [] },
  };
}

function unionDropIns(a: readonly DropIn[] | undefined, b: readonly DropIn[] | undefined): DropIn[] {
  const byName = new Map<string, DropIn>();
  for (const d of [...(a ?? []), ...(b ?? [])]) byName.set(d.name, d);
  return [...byName.values()];
}

const hasAttempts = (a: AttemptedWrites | undefined): a is AttemptedWrites => a !== undefined && (a.files.length > 0 || a.units.length > 0);

/** What `changes` sets out to write, added to `earlier` (units merged by name, drop-ins unioned). */
export function withAttempts(earlier: AttemptedWrites | undefined, changes: OscChanges): AttemptedWrites {
  const files = new Map<string, { path: string }>((earlier?.files ?? []).map((f) => [f.path, f]));
  for (const f of changes.files.changed) files.set(f.path, { path: f.path });
  const units = new Map<string, Unit>((earlier?.units ?? []).map((u) => [u.name, u]));
  for (const c of changes.units.changed) {
    const before = units.get(c.name);
    const u: Unit = { name: c.name };
    const content = c.content ?? before?.content;
    if (content !== undefined) u.content = content;
    const dropIns = unionDropIns(before?.dropIns, c.dropIns);
    if (dropIns.length > 0) u.dropIns = dropIns;
    units.set(c.name, u);
  }
  return { files: [...files.values()], units: [...units.values()] };
}

/**
 * diff.ts `resumeOrCompute`, plus the leftovers of an unfinished change set for another checksum; the
 * result records its own attempts (and still the earlier ones, until an apply completes).
 */
export function resumeOrComputeWithLeftovers(
  persisted: OscChanges | undefined,
  lastApplied: Osc | undefined,
  cur: Osc,
  checksum: string,
  hostName: string,
): { changes: OscChanges; resumed: boolean } {
  const plain = resumeOrCompute(persisted, lastApplied, cur, checksum, hostName);
  if (plain.resumed) {
    // A change set written by the Go agent (or before this field existed): its pending work is all we know.
    if (plain.changes.attemptedWrites === undefined) plain.changes.attemptedWrites = withAttempts(undefined, plain.changes);
    return plain;
  }
  const earlier = persisted?.attemptedWrites;
  // Computed against last-applied; the files and units again against what the earlier attempts may have left.
  const { changes } = plain;
  if (hasAttempts(earlier)) {
    const old = syntheticOld(lastApplied, earlier, hostName);
    changes.files = computeFileDiff(old, cur, hostName);
    changes.units = computeUnitDiff(old, cur, changes.files.changed);
  }
  changes.attemptedWrites = withAttempts(earlier, changes);
  return { changes, resumed: false };
}

/**
 * True when the changes file holds an unfinished change set for another checksum that wrote (or may
 * have written) something: a Node that already carries `checksum` still needs an apply, to remove
 * those leftovers (the Secret was reverted to the last good OSC after a broken one failed).
 */
export async function leftoversPending(host: HostFs, checksum: string): Promise<boolean> {
  const persisted = await readChanges(host);
  return persisted !== undefined && persisted.operatingSystemConfigChecksum !== checksum && hasAttempts(persisted.attemptedWrites);
}
