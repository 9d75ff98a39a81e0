import type { ChangeSummary } from "../plan/summary.ts";
import type { ApplyPorts } from "./ports.ts";

/** Files changed or deleted from which an apply collects its garbage at the end (a few hundred). */
const largeApplyFiles = 250;

/**
 * A large apply leaves megabytes of garbage (the decoded osc.yaml, the plan, the staged writes), much of it
 * promoted by the collections during the apply; the engine's own full collection waits until the heap has
 * grown a lot, so peak RSS climbed apply after apply (bench, 1000-file applies on a new ext4: VmHWM 116 MB
 * after 13 applies). One full collection once the last unit command is done keeps it at 99 MB, for 9-14 ms
 * before the checksum reaches the Node (after the last restart job). Small applies do not pay it.
 */
export function collectAfterLargeApply(summary: ChangeSummary, log: ApplyPorts["log"]): void {
  if (summary.filesChanged + summary.filesDeleted < largeApplyFiles) return;
  const start = performance.now();
  Bun.gc(true);
  log.debug("Collected the garbage of a large apply", {
    files: summary.filesChanged + summary.filesDeleted,
    ms: Math.round(performance.now() - start),
  });
}
