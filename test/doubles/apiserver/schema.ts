import { META_ORDER } from "./object-meta.ts";
import { NODE_CONDITION_ORDER, NODE_STATUS_ORDER } from "./wire-defaults.ts";

/**
 * Known fields of the served types, so unknown ones are pruned like the real decoder does (with a warning, or a
 * 400 under fieldValidation=Strict). `true` = any value (leaf, string map or a type we do not model in detail);
 * a one-element array = a list of that shape.
 */
type Shape = true | readonly [Shape] | { readonly [field: string]: Shape };

const leaf = true as const;
const fields = (...names: string[]): { [k: string]: Shape } => Object.fromEntries(names.map((n) => [n, leaf]));

const objectMeta: Shape = {
  ...fields(...META_ORDER.filter((k) => k !== "ownerReferences")),
  ownerReferences: [fields("apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion")],
};
const objectRef = fields("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath");
const top = (rest: { [k: string]: Shape }): Shape => ({ kind: leaf, apiVersion: leaf, metadata: objectMeta, ...rest });

const eventCommon = fields("reason", "type", "eventTime", "action", "reportingInstance");

const shapes: Record<string, Shape> = {
  "namespaces.": top({
    spec: fields("finalizers"),
    status: { phase: leaf, conditions: [fields("type", "status", "lastTransitionTime", "reason", "message")] },
  }),
  "nodes.": top({
    spec: {
      ...fields("podCIDR", "podCIDRs", "providerID", "unschedulable", "configSource", "externalID"),
      taints: [fields("key", "value", "effect", "timeAdded")],
    },
    status: {
      ...fields(...NODE_STATUS_ORDER.filter((k) => k !== "conditions" && k !== "addresses")),
      conditions: [fields(...NODE_CONDITION_ORDER)],
      addresses: [fields("type", "address")],
    },
  }),
  "secrets.": top(fields("data", "stringData", "type", "immutable")),
  "configmaps.": top(fields("data", "binaryData", "immutable")),
  "events.": top({
    ...eventCommon,
    ...fields("message", "firstTimestamp", "lastTimestamp", "count", "reportingComponent"),
    involvedObject: objectRef,
    related: objectRef,
    source: fields("component", "host"),
    series: fields("count", "lastObservedTime"),
  }),
  "events.events.k8s.io": top({
    ...eventCommon,
    ...fields("note", "deprecatedFirstTimestamp", "deprecatedLastTimestamp", "deprecatedCount", "reportingController"),
    regarding: objectRef,
    related: objectRef,
    deprecatedSource: fields("component", "host"),
    series: fields("count", "lastObservedTime"),
  }),
  "pods.": top({ spec: leaf, status: leaf }),
  "leases.coordination.k8s.io": top({
    spec: fields("holderIdentity", "leaseDurationSeconds", "acquireTime", "renewTime", "leaseTransitions", "strategy", "preferredHolder"),
  }),
  "certificatesigningrequests.certificates.k8s.io": top({
    spec: fields("request", "signerName", "expirationSeconds", "usages", "username", "uid", "groups", "extra"),
    status: { certificate: leaf, conditions: [fields("type", "status", "reason", "message", "lastUpdateTime", "lastTransitionTime")] },
  }),
};

/** Removes fields the type does not have from `o` (in place) and returns their paths (".spec.foo"). */
export function pruneUnknown(resourceKey: string, o: unknown): string[] {
  const shape = shapes[resourceKey];
  const unknown: string[] = [];
  if (shape !== undefined) prune(shape, o, "", unknown);
  return unknown;
}

function prune(shape: Shape, v: unknown, path: string, unknown: string[]): void {
  if (shape === true || v === null || typeof v !== "object") return;
  if (Array.isArray(shape)) {
    if (Array.isArray(v))
      v.forEach((el, i) => {
        prune(shape[0] as Shape, el, `${path}[${i}]`, unknown);
      });
    return;
  }
  if (Array.isArray(v)) return;
  const obj = v as Record<string, unknown>;
  const known = shape as { readonly [field: string]: Shape };
  for (const k of Object.keys(obj)) {
    const sub = known[k];
    if (sub === undefined) {
      unknown.push(`${path}.${k}`);
      delete obj[k];
    } else prune(sub, obj[k], `${path}.${k}`, unknown);
  }
}
