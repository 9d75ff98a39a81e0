/**
 * events.k8s.io/v1 Events are core/v1 Events in storage (as in kube-apiserver); this converts between the two
 * JSON shapes. Every other resource passes through unchanged.
 */
import type { ResourceDef } from "./resources.ts";
import { apiVersionOfDef, storageOf } from "./resources.ts";
import { decodeObject } from "./decode.ts";
import type { FieldValidation } from "./decode.ts";

type Obj = Record<string, unknown>;

/** [core/v1 field, events.k8s.io/v1 field] */
const RENAMES: readonly (readonly [string, string])[] = [
  ["involvedObject", "regarding"],
  ["message", "note"],
  ["reportingComponent", "reportingController"],
  ["source", "deprecatedSource"],
  ["firstTimestamp", "deprecatedFirstTimestamp"],
  ["lastTimestamp", "deprecatedLastTimestamp"],
  ["count", "deprecatedCount"],
];

function rename(o: Obj, from: 0 | 1): Obj {
  const to = from === 0 ? 1 : 0;
  const out: Obj = {};
  for (const [k, v] of Object.entries(o)) {
    const pair = RENAMES.find((r) => r[from] === k);
    out[pair === undefined ? k : pair[to]] = v;
  }
  return out;
}

const isView = (view: ResourceDef): boolean => view.storedAs !== undefined;

/** Decodes a request body of `view` into the stored (core) form. */
export function decodeForStorage(view: ResourceDef, body: unknown, fv?: FieldValidation): Obj {
  const o = decodeObject(view, body, fv);
  if (!isView(view)) return o;
  const stored = storageOf(view);
  return decodeObject(stored, { ...rename(o, 1), kind: stored.kind, apiVersion: apiVersionOfDef(stored) });
}

/** events.k8s.io/v1 declares these `omitempty` while core/v1 always sends them. */
const OMIT_EMPTY_IN_VIEW = ["reportingController", "reportingInstance"];

/** The stored object as `view` shows it. */
export function toView(view: ResourceDef, o: Obj): Obj {
  if (!isView(view)) return o;
  const { kind: _k, apiVersion: _a, ...rest } = o;
  const out: Obj = { kind: view.kind, apiVersion: apiVersionOfDef(view), ...rename(rest, 0) };
  for (const k of OMIT_EMPTY_IN_VIEW) if (out[k] === "") delete out[k];
  return out;
}
