import * as v from "valibot";
import { nodes } from "./resources.ts";
import type { Kube, KubeObject } from "./types.ts";

// The Node's wire formats several controllers share: its conditions and metadata patches, and metav1 times.

/** metav1.Time text: RFC 3339 in UTC, whole seconds. */
export const kubeTime = (ms: number): string => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");

/** metav1.MicroTime as the API server demands it: UTC with exactly 6 fractional digits (the clock has ms resolution). */
export const microTime = (ms: number): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");

/** What a Node condition says, before its times are added. */
export type ConditionState<Status extends string = string, Reason extends string = string> = {
  readonly status: Status;
  readonly reason: Reason;
  readonly message: string;
};

/** A core/v1 NodeCondition as sent on the wire (times are RFC 3339, second precision). */
export type NodeCondition<Status extends string = string, Reason extends string = string> = ConditionState<Status, Reason> & {
  readonly type: string;
  readonly lastHeartbeatTime: string;
  readonly lastTransitionTime: string;
};

// The API server writes an unset time as null: read as absent.
const text = v.optional(
  v.pipe(
    v.nullable(v.string()),
    v.transform((s) => s ?? undefined),
  ),
);
const conditionSchema = v.looseObject({
  type: v.string(),
  status: text,
  reason: text,
  message: text,
  lastHeartbeatTime: text,
  lastTransitionTime: text,
});
const nodeStatusSchema = v.looseObject({
  status: v.optional(v.looseObject({ conditions: v.optional(v.nullable(v.array(v.unknown()))) })),
});

/** A condition as read from a Node: every field but `type` may be missing. */
export type ExistingCondition = v.InferOutput<typeof conditionSchema>;

/** The condition of `type` in a Node's `status.conditions`; malformed entries are skipped. */
export function findCondition(node: unknown, type: string): ExistingCondition | undefined {
  const parsed = v.safeParse(nodeStatusSchema, node);
  if (!parsed.success) return undefined;
  for (const raw of parsed.output.status?.conditions ?? []) {
    const c = v.safeParse(conditionSchema, raw);
    if (c.success && c.output.type === type) return c.output;
  }
  return undefined;
}

/** The condition to send; `existing`'s lastTransitionTime is kept while the status stays the same. */
export function nodeCondition<S extends string, R extends string>(
  type: string,
  state: ConditionState<S, R>,
  nowMs: number,
  existing: ExistingCondition | undefined,
): NodeCondition<S, R> {
  const now = kubeTime(nowMs);
  const kept = existing?.status === state.status ? existing.lastTransitionTime : undefined;
  return { type, ...state, lastHeartbeatTime: now, lastTransitionTime: kept ?? now };
}

/** Merge-patches the Node's labels/annotations (`null` removes a key); returns the patched Node. */
export const patchNodeMetadata = (
  kube: Pick<Kube, "patch">,
  node: KubeObject,
  meta: { labels?: Record<string, string | null>; annotations?: Record<string, string | null> },
  signal: AbortSignal,
): Promise<KubeObject> => kube.patch<KubeObject>(nodes, "", node.metadata.name ?? "", "merge", { metadata: meta }, { signal });
