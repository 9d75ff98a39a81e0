import { keepOutOfTopTier } from "../../../jit/index.ts";
import { digestFile, isDigested, type OscFile } from "../../../osc/index.ts";

/**
 * Semantic deep equality of decoded OSC values (Kubernetes' Semantic.DeepEqual): undefined keys are
 * ignored, an empty list equals an absent one, list order matters.
 */
export function semanticEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const emptyA = a === undefined || a === null || (Array.isArray(a) && a.length === 0);
  const emptyB = b === undefined || b === null || (Array.isArray(b) && b.length === 0);
  if (Array.isArray(a) || Array.isArray(b)) {
    if (emptyA && emptyB) return true;
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => semanticEqual(x, b[i]));
  }
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  // Every key of either side once, without building their union (a diff of 1000 files compares ~3000 objects).
  for (const k of Object.keys(ra)) if (!fieldEqual(ra[k], rb[k])) return false;
  for (const k of Object.keys(rb)) if (!Object.hasOwn(ra, k) && !fieldEqual(ra[k], rb[k])) return false;
  return true;
}

function fieldEqual(va: unknown, vb: unknown): boolean {
  if (va === undefined && vb === undefined) return true;
  if ((va === undefined || vb === undefined) && !(isEmptyList(va) && isEmptyList(vb))) return false;
  return semanticEqual(va, vb);
}

const isEmptyList = (x: unknown) => x === undefined || (Array.isArray(x) && x.length === 0);

/**
 * Whether file `old` (maybe from a digested last-applied OSC, shared/last-applied.ts) and `cur` are the
 * same entry: a digested side is compared by the digest of the other side's inline data.
 */
export function sameFile(old: OscFile, cur: OscFile): boolean {
  if (isDigested(old) === isDigested(cur)) return semanticEqual(old, cur);
  return isDigested(old) ? semanticEqual(old, digestFile(cur)) : semanticEqual(digestFile(old), cur);
}
// Issue 25: per file or line of a 1000-file apply (jit/top-tier.ts).
keepOutOfTopTier(semanticEqual);
