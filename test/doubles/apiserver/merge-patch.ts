/** JSON merge patch (RFC 7386) and strategic merge patch for the list fields our resources carry. */
import { badRequest } from "./status.ts";

type Json = unknown;
type Obj = Record<string, unknown>;

export const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

export function jsonMergePatch(target: Json, patch: Json): Json {
  if (!isObj(patch)) return patch;
  const out: Obj = isObj(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = jsonMergePatch(out[k], v);
  }
  return out;
}

/** How a list field merges under strategic merge patch: by key (maps), as a set (primitives), else replaced. */
export interface ListStrategy {
  mergeKey?: string;
}

const common: Record<string, ListStrategy> = {
  "metadata.ownerReferences": { mergeKey: "uid" },
  "metadata.finalizers": {},
};

const container = (p: string): Record<string, ListStrategy> => ({
  [p]: { mergeKey: "name" },
  [`${p}.env`]: { mergeKey: "name" },
  [`${p}.ports`]: { mergeKey: "containerPort" },
  [`${p}.volumeMounts`]: { mergeKey: "mountPath" },
  [`${p}.volumeDevices`]: { mergeKey: "devicePath" },
});

/** patchStrategy/patchMergeKey tags of k8s.io/api for the types served; lists not named here are atomic. */
const byResource: Record<string, Record<string, ListStrategy>> = {
  nodes: {
    "spec.podCIDRs": {},
    "status.conditions": { mergeKey: "type" },
    "status.addresses": { mergeKey: "type" },
  },
  pods: {
    ...container("spec.containers"),
    ...container("spec.initContainers"),
    ...container("spec.ephemeralContainers"),
    "spec.volumes": { mergeKey: "name" },
    "spec.imagePullSecrets": { mergeKey: "name" },
    "status.conditions": { mergeKey: "type" },
    "status.podIPs": { mergeKey: "ip" },
  },
  namespaces: { "status.conditions": { mergeKey: "type" } },
};

function strategyFor(resource: string, path: string): ListStrategy | undefined {
  return common[path] ?? byResource[resource]?.[path];
}

const DIRECTIVE = "$patch";
const ORDER = "$setElementOrder/";
const DELETE_PRIMITIVE = "$deleteFromPrimitiveList/";
const RETAIN = "$retainKeys";

export function strategicMergePatch(resource: string, original: Json, patch: Json): Json {
  if (!isObj(patch)) throw badRequest("strategic merge patch must be a JSON object");
  return mergeMap(resource, isObj(original) ? original : {}, patch, "");
}

function join(path: string, key: string): string {
  return path === "" ? key : `${path}.${key}`;
}

function mergeMap(resource: string, original: Obj, patch: Obj, path: string): Obj | undefined {
  const directive = patch[DIRECTIVE];
  if (directive === "delete") return undefined;
  if (directive === "replace") {
    const { [DIRECTIVE]: _, ...rest } = patch;
    return stripNulls(rest) as Obj;
  }
  if (directive !== undefined) throw badRequest(`Unknown patch type: ${String(directive)}`);
  let out: Obj = { ...original };
  const retain = patch[RETAIN];
  if (Array.isArray(retain)) {
    out = Object.fromEntries(Object.entries(out).filter(([k]) => retain.includes(k)));
  }
  const orders: [string, unknown[]][] = [];
  for (const [k, v] of Object.entries(patch)) {
    if (k === RETAIN) continue;
    if (k.startsWith(ORDER)) {
      if (Array.isArray(v)) orders.push([k.slice(ORDER.length), v]);
      continue;
    }
    if (k.startsWith(DELETE_PRIMITIVE)) {
      const field = k.slice(DELETE_PRIMITIVE.length);
      const cur = out[field];
      if (Array.isArray(cur) && Array.isArray(v)) out[field] = cur.filter((x) => !v.some((d) => deepEqual(d, x)));
      continue;
    }
    const p = join(path, k);
    if (v === null) {
      delete out[k];
    } else if (isObj(v)) {
      const merged = mergeMap(resource, isObj(out[k]) ? (out[k] as Obj) : {}, v, p);
      if (merged === undefined) delete out[k];
      else out[k] = merged;
    } else if (Array.isArray(v)) {
      const strat = strategyFor(resource, p);
      out[k] = strat === undefined ? stripNulls(v) : mergeList(resource, Array.isArray(out[k]) ? (out[k] as unknown[]) : [], v, strat, p);
    } else {
      out[k] = v;
    }
  }
  for (const [field, order] of orders) {
    const cur = out[field];
    if (Array.isArray(cur)) out[field] = applyOrder(cur, order, strategyFor(resource, join(path, field)));
  }
  return out;
}

function mergeList(resource: string, original: unknown[], patch: unknown[], strat: ListStrategy, path: string): unknown[] {
  if (patch.some((e) => isObj(e) && e[DIRECTIVE] === "replace")) {
    return patch.filter((e) => !(isObj(e) && e[DIRECTIVE] === "replace")).map(stripNulls);
  }
  const key = strat.mergeKey;
  if (key === undefined) {
    const out = [...original];
    for (const e of patch) if (!out.some((x) => deepEqual(x, e))) out.push(e);
    return out;
  }
  const out = [...original];
  for (const e of patch) {
    if (!isObj(e)) throw badRequest(`merging an object in json but data type is not map: ${JSON.stringify(e)}`);
    if (!Object.hasOwn(e, key)) throw badRequest(`map: ${JSON.stringify(e)} does not contain declared merge key: ${key}`);
    const idx = out.findIndex((x) => isObj(x) && deepEqual(x[key], e[key]));
    if (e[DIRECTIVE] === "delete") {
      if (idx >= 0) out.splice(idx, 1);
      continue;
    }
    if (idx >= 0) {
      const merged = mergeMap(resource, out[idx] as Obj, e, path);
      if (merged === undefined) out.splice(idx, 1);
      else out[idx] = merged;
    } else {
      out.push(mergeMap(resource, {}, e, path));
    }
  }
  return out;
}

/** $setElementOrder: listed elements first in the given order, unlisted ones keep their place after them. */
function applyOrder(list: unknown[], order: unknown[], strat: ListStrategy | undefined): unknown[] {
  const key = strat?.mergeKey;
  const id = (x: unknown): unknown => (key !== undefined && isObj(x) ? x[key] : x);
  const ordered: unknown[] = [];
  for (const o of order) {
    const want = key !== undefined && isObj(o) ? o[key] : o;
    const found = list.find((x) => deepEqual(id(x), want));
    if (found !== undefined && !ordered.includes(found)) ordered.push(found);
  }
  return [...ordered, ...list.filter((x) => !ordered.includes(x))];
}

function stripNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stripNulls);
  if (isObj(v))
    return Object.fromEntries(
      Object.entries(v)
        .filter(([, x]) => x !== null)
        .map(([k, x]) => [k, stripNulls(x)]),
    );
  return v;
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isObj(a) && isObj(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}
