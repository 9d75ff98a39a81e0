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
