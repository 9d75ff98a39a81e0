import { bigTextChars } from "../../../text/index.ts";
import type { Osc, OscChanges } from "../../../osc/index.ts";
import type { ChangeSummary } from "../plan/summary.ts";
import type { ApplyPorts } from "./ports.ts";

/** Files changed or deleted from which an apply collects its garbage at the end (a few hundred). */
const largeApplyFiles = 250;

/**
 * A large apply leaves megabytes of promoted garbage, and peak RSS climbed apply after apply (bench,
 * 1000-file applies: VmHWM 116 MB after 13). One full collection after the last unit command keeps it
 * at 99 MB for 9-14 ms; small applies do not pay it.
 */
export function collectAfterLargeApply(summary: ChangeSummary, log: ApplyPorts["log"]): void {
  if (summary.filesChanged + summary.filesDeleted < largeApplyFiles) return;
  const start = performance.now();
  Bun.gc(true);
  log.debug("Collected the garbage of a large apply", {
    files: summary.filesChanged + summary.filesDeleted,
    stage: "applied",
    ms: Math.round(performance.now() - start),
  });
}

/**
 * Once planning is done, before the writes add their own garbage; nothing for a small apply (as at its
 * end). A big OSC (≥ bigTextChars of inline content) is collected in full here, whatever changed: its plan read the last-applied file and left ~60 MB (5,000 files,
 * 20 MB, issue 27). A large apply of any other OSC only asks for a concurrent collection (Bun.gc(false): JSC's collector
 * thread marks while this one writes): a full one here marks the whole live heap before the first write,
 * 14-22 ms of a 1000-file apply of 40 KB content, which the writes and the restarts would wait for.
 */
export function collectAfterBigPlan(osc: Osc, summary: ChangeSummary, log: ApplyPorts["log"]): void {
  const chars = oscInlineChars(osc);
  if (chars < bigTextChars) {
    if (summary.filesChanged + summary.filesDeleted >= largeApplyFiles) Bun.gc(false);
    return;
  }
  const start = performance.now();
  Bun.gc(true);
  log.debug("Collected the garbage of a large apply", { inlineChars: chars, stage: "planned", ms: Math.round(performance.now() - start) });
}

/** Characters of inline file content in the whole OSC, the extensions' files included. */
export function oscInlineChars(osc: Osc): number {
  let n = 0;
  for (const f of osc.spec.files ?? []) n += f.content.inline?.data.length ?? 0;
  for (const f of osc.status.extensionFiles ?? []) n += f.content.inline?.data.length ?? 0;
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
