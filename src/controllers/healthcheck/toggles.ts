/** NotReady→Ready transitions this many times in the window earn a Warning event. */
const maxToggles = 5;
/** The floating window over which transitions are counted. */
const toggleWindowMs = 10 * 60_000;

/**
 * Records one NotReady→Ready transition at `nowMs`: transitions older than the window are dropped
 * first. `tooMany` is true once at least `maxToggles` remain (the current one included).
 */
export function recordReadyToggle(toggles: readonly number[], nowMs: number): { readonly toggles: number[]; readonly tooMany: boolean } {
  const kept = toggles.filter((t) => Math.abs(nowMs - t) <= toggleWindowMs);
  kept.push(nowMs);
  return { toggles: kept, tooMany: kept.length >= maxToggles };
}
