import { bigTextChars } from "../../../text/index.ts";
import type { OscChanges } from "../../../osc/index.ts";
import type { ChangeSummary } from "../plan/summary.ts";
import type { ApplyPorts } from "./ports.ts";

/** Files changed or deleted from which an apply collects its garbage at the end (a few hundred). */
const largeApplyFiles = 250;

/**
 * A large apply leaves megabytes of promoted garbage, and peak RSS climbed apply after apply (bench,
 * 1000-file applies: VmHWM 116 MB after 13). One full collection after the last unit command keeps it
 * at 99 MB for 9-14 ms; small applies do not pay it. `planned`: also once planning is done, before the
 * writes add their own (a 5,000-file OSC's plan read the last-applied file and left ~60 MB, issue 27).
 */
export function collectAfterLargeApply(summary: ChangeSummary, log: ApplyPorts["log"], stage: "planned" | "applied" = "applied"): void {
  if (summary.filesChanged + summary.filesDeleted < largeApplyFiles) return;
  const start = performance.now();
  Bun.gc(true);
  log.debug("Collected the garbage of a large apply", {
    files: summary.filesChanged + summary.filesDeleted,
    stage,
    ms: Math.round(performance.now() - start),
  });
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
