import { noFTL } from "bun:jsc";

/**
 * Keeps functions out of JSC's top tier (FTL); they still reach the tier below (DFG), which runs them fast
 * enough. Issue 25: the functions a 1000-file apply calls per file or per line (the OSC's YAML scan and
 * decode, the change set's path checks, the state files' YAML writer, a log line's keys) were compiled by
 * FTL during the apply, on a compiler thread whose memory stayed with the process: one compile of the YAML
 * scan's per-line function (≈ 1,150 bytecodes, 40-66 ms) raised the peak by ≈ 7 MB, and any FTL compile
 * pages in ≈ 1.5 MB of the compiler's code. Which functions got there varied from run to run (the
 * peak's ≈ 82 / ≈ 86 MB), so every function seen compiled there in the bench is listed at its definition.
 */
export function keepOutOfTopTier(...functions: readonly ((...args: never[]) => unknown)[]): void {
  for (const f of functions) noFTL(f as (...args: unknown[]) => unknown);
}
