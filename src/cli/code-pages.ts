import type { Library } from "bun:ffi";
import type { Clock } from "../clock/index.ts";
import type { Logger } from "../log/types.ts";

/**
 * Start-up runs a lot of code once (module loading, the JS parser, TLS set-up, YAML, the first API
 * calls) whose pages stay mapped into the process although an idle agent never runs them again:
 * about 14 MB of the executable's 31 MB of resident code. Once the agent has been ready for a while,
 * `madvise(MADV_DONTNEED)` on the executable's read-only code mappings unmaps them; the kernel keeps
 * them in the page cache, and code that runs again is mapped back on its next use (a minor fault).
 * Only never-written `r-xp` mappings of the executable are released, so no private page is lost.
 * RSS then shows what the agent really uses while idle; the page cache (and the cgroup's
 * memory.current, which counts it) is unchanged until the kernel reclaims it.
 */

/** One executable code mapping of this process. */
export interface CodeRange {
  readonly start: bigint;
  readonly length: bigint;
}

const MAPS_LINE = /^([0-9a-f]+)-([0-9a-f]+) (\S{4}) \S+ \S+ \S+\s+(.*)$/;

/** The private read+execute mappings of `exePath` in a /proc/<pid>/maps text. */
export const executableCodeRanges = (maps: string, exePath: string): CodeRange[] => {
  const ranges: CodeRange[] = [];
  for (const line of maps.split("\n")) {
    const m = MAPS_LINE.exec(line);
    if (m === null || m[3] !== "r-xp" || m[4] !== exePath) continue;
    const start = BigInt(`0x${m[1]}`);
    const end = BigInt(`0x${m[2]}`);
    if (end > start) ranges.push({ start, length: end - start });
  }
  return ranges;
};

/** madvise(MADV_DONTNEED) on each range: how many succeeded, or undefined when madvise is not available. */
export type DropPages = (ranges: readonly CodeRange[]) => Promise<number | undefined>;

export interface CodePagesDeps {
  /** /proc/self/maps. */
  readonly readMaps: () => Promise<string>;
  /** The running executable (`process.execPath`). */
  readonly exePath: string;
  readonly dropPages: DropPages;
  readonly clock: Clock;
  readonly log: Logger;
}

/** Ranges released, or "unsupported" when there was nothing to release or no madvise. */
export type ReleaseOutcome = { readonly released: number; readonly failed: number } | "unsupported";

/** Releases the executable's code pages now (see the file comment). */
export const releaseCodePages = async (deps: Pick<CodePagesDeps, "readMaps" | "exePath" | "dropPages">): Promise<ReleaseOutcome> => {
  const ranges = executableCodeRanges(await deps.readMaps(), deps.exePath);
  if (ranges.length === 0) return "unsupported";
  const released = await deps.dropPages(ranges);
  if (released === undefined) return "unsupported";
  return { released, failed: ranges.length - released };
};

/**
 * After `delayMs` of being ready (so the first reconciles ran), releases the code pages once and logs
 * the outcome. Failing to release costs nothing but memory, so a failure is logged, never thrown.
 * Resolves at once when `signal` aborts first.
 */
export const releaseCodePagesAfter = async (delayMs: number, deps: CodePagesDeps, signal: AbortSignal): Promise<void> => {
  try {
    await deps.clock.sleep(delayMs, signal);
  } catch (err) {
    if (signal.aborted) return;
    throw err;
  }
  try {
    const outcome = await releaseCodePages(deps);
    deps.log.debug("Released start-up code pages", outcome === "unsupported" ? { outcome } : { ...outcome });
  } catch (err) {
    // Only memory is at stake: the agent works the same with the pages mapped.
    deps.log.info("Could not release start-up code pages", { err });
  }
};

const MADV_DONTNEED = 4;

/** libc's madvise through bun:ffi, opened for one batch; undefined when libc cannot be opened (e.g. musl). */
export const libcDropPages =
  (libcPath = "libc.so.6"): DropPages =>
  async (ranges) => {
    const ffi = await import("bun:ffi");
    const symbols = { madvise: { args: [ffi.FFIType.u64, ffi.FFIType.u64, ffi.FFIType.i32], returns: ffi.FFIType.i32 } } as const;
    let libc: Library<typeof symbols>;
    try {
      libc = ffi.dlopen(libcPath, symbols);
    } catch (err) {
      // dlopen throws a plain Error naming the library; without libc there is simply nothing to do.
      if (err instanceof Error) return undefined;
      throw err;
    }
    try {
      let released = 0;
      for (const r of ranges) if (libc.symbols.madvise(r.start, r.length, MADV_DONTNEED) === 0) released++;
      return released;
    } finally {
      libc.close();
    }
  };
