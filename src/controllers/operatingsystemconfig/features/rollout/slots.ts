import type { RolloutTimings } from "./timings.ts";

/** Lease annotation prefix of a node's slot: `slot.node-agent.gardener.cloud/<node>`. */
export const slotAnnotationPrefix = "slot.node-agent.gardener.cloud/";
/** Node annotation that turns chunked rollouts on: at most N nodes of the pool change at once. */
const parallelismAnnotation = "node-agent.gardener.cloud/rollout-parallelism";

/** Only nodes holding a slot (or whose change failed) have an entry: a waiting node writes nothing (issue 25). */
export type SlotState = "applying" | "verifying" | "failed";

/**
 * One node's entry, stored as compact JSON `{checksum, since, renewed, state}` (times RFC 3339), plus
 * `node` when the annotation key had to shorten the node name (see `slotKey`).
 */
export interface Slot {
  readonly checksum: string;
  readonly since: string;
  readonly renewed: string;
  readonly state: SlotState;
  readonly node?: string;
}

/** The name part of an annotation key is at most 63 characters (a qualified name). */
const maxNamePart = 63;

/**
 * `slot.node-agent.gardener.cloud/<node>`; a node name longer than 63 characters is cut to 46 and
 * suffixed with 16 hex digits of its SHA-256, and the full name goes into the slot's `node` field.
 */
export function slotKey(node: string): { readonly key: string; readonly hashed: boolean } {
  if (node.length <= maxNamePart) return { key: `${slotAnnotationPrefix}${node}`, hashed: false };
  const digest = new Bun.CryptoHasher("sha256").update(node).digest("hex").slice(0, 16);
  return { key: `${slotAnnotationPrefix}${node.slice(0, maxNamePart - 17)}-${digest}`, hashed: true };
}

const states: readonly string[] = ["applying", "verifying", "failed"];

/** The annotation value; undefined when it is not a slot (a foreign or hand-edited value is ignored). */
export function parseSlot(text: string): Slot | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined; // not ours: treated like an absent entry
  }
  const { checksum, since, renewed, state, node } = v !== null && typeof v === "object" ? (v as Record<string, unknown>) : {};
  if (typeof checksum !== "string" || typeof since !== "string" || typeof renewed !== "string") return undefined;
  if (typeof state !== "string" || !states.includes(state)) return undefined;
  const slot: Slot = { checksum, since, renewed, state: state as SlotState };
  return typeof node === "string" ? { ...slot, node } : slot;
}

/** Compact JSON with a fixed key order (`node` only when set: JSON leaves out undefined). */
export const formatSlot = (s: Slot): string =>
  JSON.stringify({ checksum: s.checksum, since: s.since, renewed: s.renewed, state: s.state, node: s.node });

/** RFC 3339, whole milliseconds. */
export const slotTime = (ms: number): string => new Date(ms).toISOString();

/** N from the Node annotation; undefined when absent or not an integer ≥ 1 (upstream behaviour then). */
export function rolloutParallelism(nodeAnnotations: Readonly<Record<string, string>> | undefined): number | undefined {
  const text = nodeAnnotations?.[parallelismAnnotation];
  if (text === undefined || !/^[0-9]+$/.test(text.trim())) return undefined;
  const n = Number(text.trim());
  return Number.isSafeInteger(n) && n >= 1 ? n : undefined;
}

/** Every node's slot on the Lease, by node name. */
export function slotsOf(annotations: Readonly<Record<string, string>> | undefined): Map<string, Slot> {
  const out = new Map<string, Slot>();
  for (const [k, v] of Object.entries(annotations ?? {})) {
    if (!k.startsWith(slotAnnotationPrefix)) continue;
    const s = parseSlot(v);
    if (s !== undefined) out.set(s.node ?? k.slice(slotAnnotationPrefix.length), s);
  }
  return out;
}

/** Not renewed for `staleAfterMs`: its node stopped looking after it (died, or its Node is gone). */
const isStale = (s: Slot, nowMs: number, t: RolloutTimings): boolean =>
  nowMs - Date.parse(s.renewed) >= t.staleAfterMs || Number.isNaN(Date.parse(s.renewed));

/** A slot whose owner's Node is worth asking about (issue 25): failed or stale (live slots are renewed). */
export const mayBeGone = (s: Slot, nowMs: number, t: RolloutTimings): boolean => s.state === "failed" || isStale(s, nowMs, t);

/** What a node that is not up to date does next. */
export type SlotDecision =
  /** Our own slot for this checksum is applying (resume the apply) or verifying (keep checking health). */
  | { readonly kind: "resume"; readonly state: "applying" | "verifying" }
  /** Our own slot failed for this checksum: the change stays off until an operator acts. */
  | { readonly kind: "own-failed" }
  | { readonly kind: "take" }
  | { readonly kind: "wait"; readonly behind: readonly string[] }
  | { readonly kind: "halted"; readonly failed: readonly string[] };

/**
 * The decision table of chunked rollouts for `me`; a stale own active slot is resumed (staleness only presumed
 * us dead). Others' failed entries count for the current checksum only (a fixed OSC is not blocked by old
 * failures); a live active slot of any checksum counts (N bounds the nodes changing at once); a stale one counts as failed.
 */
export function decide(
  slots: ReadonlyMap<string, Slot>,
  me: string,
  checksum: string,
  n: number,
  nowMs: number,
  t: RolloutTimings,
): SlotDecision {
  const mine = slots.get(me);
  const own = mine?.checksum === checksum ? mine : undefined;
  if (own?.state === "applying" || own?.state === "verifying") return { kind: "resume", state: own.state };
  if (own?.state === "failed") return { kind: "own-failed" };
  const active: string[] = [];
  const failed: string[] = [];
  for (const [node, s] of [...slots].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (node !== me && s.state !== "failed" && !isStale(s, nowMs, t)) active.push(node);
    else if (node !== me && s.checksum === checksum) failed.push(node);
  }
  if (failed.length >= n) return { kind: "halted", failed };
  if (active.length + failed.length >= n) return { kind: "wait", behind: [...active, ...failed] };
  return { kind: "take" };
}
