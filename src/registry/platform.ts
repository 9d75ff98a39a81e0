import type { Platform } from "./types.ts";

/** Whether an index entry's platform satisfies the wanted one (arm64 "v8" equals no variant). */
export function platformMatches(candidate: Platform, wanted: Platform): boolean {
  if (candidate.os !== wanted.os || candidate.architecture !== wanted.architecture) return false;
  const norm = (p: Platform) => (p.architecture === "arm64" && p.variant === "v8" ? undefined : p.variant);
  const want = norm(wanted);
  return want === undefined || norm(candidate) === want;
}
