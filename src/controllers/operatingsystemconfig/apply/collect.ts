import { edenGC } from "bun:jsc";
import { bigTextChars } from "../../../text/index.ts";
import type { Osc, OscChanges } from "../../../osc/index.ts";
import type { ChangeSummary } from "../plan/summary.ts";
import type { ApplyPorts } from "./ports.ts";

/** Files changed or deleted from which an apply collects its garbage at the end (a few hundred). */
const largeApplyFiles = 250;

/**
 * A large apply leaves megabytes of promoted garbage, and peak RSS climbed apply after apply (bench,
 * 1000-file applies: VmHWM 116 MB after 13). One full collection after the last unit command keeps it
 * at 99 MB for 9-14 ms; small applies do not pay it. `planned` (with the OSC applied): also once planning
 * is done, before the writes add their own. A big OSC's plan (its last-applied file read, ~60 MB left
 * by a 5,000-file OSC, issue 27) gets a full collection there too; the plan of many small files leaves
 * garbage made since the last collection, which an eden collection takes in a fraction of the time.
 */
export function collectAfterLargeApply(summary: ChangeSummary, log: ApplyPorts["log"], planned?: Osc): void {
  if (summary.filesChanged + summary.filesDeleted < largeApplyFiles) return;
  const start = performance.now();
  const full = planned === undefined || oscInlineChars(planned) >= bigTextChars;
  if (full) Bun.gc(true);
  else edenGC();
  log.debug("Collected the garbage of a large apply", {
    files: summary.filesChanged + summary.filesDeleted,
    stage: planned === undefined ? "applied" : "planned",
    collection: full ? "full" : "eden",
    ms: Math.round(performance.now() - start),
  });
}

/** Characters of inline content in `osc`: about the size of its last-applied file. */
function oscInlineChars(osc: Osc): number {
  let n = 0;
  for (const f of osc.spec.files ?? []) n += f.content.inline?.data.length ?? 0;
  return n;
}

/** Characters of inline content the change set writes (counted before the writes record their completion). */
export function inlineContentChars(changes: OscChanges): number {
  let n = 0;
  for (const f of changes.files.changed) n += f.content.inline?.data.length ?? 0;
  return n;
}

/**
 * After the changed files of a big OSC are written (issue 27): their decoded bytes and the changes
 * record's text are garbage, tens of megabytes that the unit steps would otherwise add to. Before the
 * record's text is made ("file temps"): the temps' garbage, which it would otherwise be added to. And
 * after its last-applied file is written: that text (as long as the OSC) would otherwise still be there
 * when the next version's Secret arrives, under its decode.
 */
export function collectAfterBigWrite(
  writtenChars: number,
  log: ApplyPorts["log"],
  written: "files" | "file temps" | "last-applied" = "files",
): void {
  if (writtenChars < bigTextChars) return;
  const start = performance.now();
  Bun.gc(true);
  log.debug("Collected the garbage of the written files", { writtenChars, written, ms: Math.round(performance.now() - start) });
}
