/**
 * Decoding checks the real server performs while turning JSON into typed objects (failures are 400 BadRequest):
 * MicroTime needs exactly 6 fractional digits, metav1.Time is stored at second precision, Secret data is base64.
 */
import type { ResourceDef } from "./resources.ts";
import { apiVersionOfDef } from "./resources.ts";
import { badRequest } from "./status.ts";
import { isObj } from "./merge-patch.ts";
import { pruneUnknown } from "./schema.ts";

type Obj = Record<string, unknown>;

const MICRO_LAYOUT = "2006-01-02T15:04:05.000000Z07:00";
const RFC3339 = "2006-01-02T15:04:05Z07:00";

/** Paths of metav1.Time fields ("*" = every list element). */
const timeFields: Record<string, string[][]> = {
  "*": [
    ["metadata", "creationTimestamp"],
    ["metadata", "deletionTimestamp"],
  ],
  nodes: [
    ["status", "conditions", "*", "lastHeartbeatTime"],
    ["status", "conditions", "*", "lastTransitionTime"],
    ["spec", "taints", "*", "timeAdded"],
  ],
  pods: [
    ["status", "conditions", "*", "lastProbeTime"],
    ["status", "conditions", "*", "lastTransitionTime"],
    ["status", "startTime"],
  ],
  events: [["firstTimestamp"], ["lastTimestamp"]],
  certificatesigningrequests: [
    ["status", "conditions", "*", "lastUpdateTime"],
    ["status", "conditions", "*", "lastTransitionTime"],
  ],
};

/** Paths of metav1.MicroTime fields. */
const microTimeFields: Record<string, string[][]> = {
  leases: [
    ["spec", "renewTime"],
    ["spec", "acquireTime"],
  ],
  events: [["eventTime"], ["series", "lastObservedTime"]],
};

/** Visits every value at `path`, letting `fn` replace it (returning undefined deletes it). */
function visit(o: unknown, path: string[], fn: (v: unknown) => unknown): void {
  const [head, ...rest] = path;
  if (head === undefined) return;
  if (head === "*") {
    if (Array.isArray(o)) for (const el of o) visit(el, rest, fn);
    return;
  }
  if (!isObj(o) || !Object.hasOwn(o, head)) return;
  if (rest.length > 0) return visit(o[head], rest, fn);
  const next = fn(o[head]);
  if (next === undefined) delete o[head];
  else o[head] = next;
}

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})/;
const ZONE_RE = /^(Z|[+-]\d{2}:\d{2})$/;

function cannotParse(kind: string, version: string, value: string, layout: string, rest: string, elem: string): never {
  throw badRequest(
    `${kind} in version "${version}" cannot be handled as a ${kind}: parsing time "${value}" as "${layout}": cannot parse "${rest}" as "${elem}"`,
  );
}

function parseTime(kind: string, version: string, v: unknown, micro: boolean): string | undefined {
  if (v === null) return undefined;
  const layout = micro ? MICRO_LAYOUT : RFC3339;
  if (typeof v !== "string") throw badRequest(`${kind} in version "${version}" cannot be handled as a ${kind}: invalid time value`);
  const m = DATE_RE.exec(v);
  if (!m) cannotParse(kind, version, v, layout, v, "2006");
  let rest = v.slice(m[0].length);
  let frac = "";
  if (micro) {
    if (!/^\.\d{6}/.test(rest)) cannotParse(kind, version, v, layout, rest, ".000000");
    frac = rest.slice(1, 7);
    rest = rest.slice(7);
  } else {
    const f = /^[.,](\d+)/.exec(rest);
    if (f) rest = rest.slice(f[0].length);
  }
  if (!ZONE_RE.test(rest)) cannotParse(kind, version, v, layout, rest, "Z07:00");
  const ms = Date.parse(`${m[0]}${rest}`);
  if (Number.isNaN(ms)) cannotParse(kind, version, v, layout, v, "2006-01-02T15:04:05");
  const base = new Date(ms).toISOString().slice(0, 19);
  return micro ? `${base}.${frac}Z` : `${base}Z`;
}

function checkBase64(kind: string, version: string, data: unknown): void {
  if (data === undefined || data === null) return;
  if (!isObj(data)) throw badRequest(`${kind} in version "${version}" cannot be handled as a ${kind}: data must be a map`);
  for (const v of Object.values(data)) {
    if (typeof v !== "string")
      throw badRequest(`${kind} in version "${version}" cannot be handled as a ${kind}: data values must be strings`);
    const bad = /[^A-Za-z0-9+/=]/.exec(v);
    if (bad || v.length % 4 !== 0 || /=[^=]/.test(v)) {
      const at = bad ? bad.index : v.length - (v.length % 4);
      throw badRequest(`${kind} in version "${version}" cannot be handled as a ${kind}: illegal base64 data at input byte ${at}`);
    }
  }
}

/** The `fieldValidation` of a write: unknown fields are an error (Strict), a warning (Warn) or silently dropped. */
export interface FieldValidation {
  readonly mode: "Strict" | "Warn" | "Ignore";
  /** Collects "unknown field ..." texts in Warn mode. */
  readonly warnings: string[];
}

/** Checks and normalises a request body into a stored object of `def` (kind/apiVersion filled in). */
export function decodeObject(def: ResourceDef, body: unknown, fv?: FieldValidation): Obj {
  const apiVersion = apiVersionOfDef(def);
  if (!isObj(body)) throw badRequest(`${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: body must be an object`);
  if (body["kind"] !== undefined && body["kind"] !== "" && body["kind"] !== def.kind)
    throw badRequest(`the kind in the data (${String(body["kind"])}) does not match the expected kind (${def.kind})`);
  if (body["apiVersion"] !== undefined && body["apiVersion"] !== "" && body["apiVersion"] !== apiVersion)
    throw badRequest(`the API version in the data (${String(body["apiVersion"])}) does not match the expected API version (${apiVersion})`);
  const o = structuredClone(body);
  if (o["metadata"] === undefined || o["metadata"] === null) o["metadata"] = {};
  if (!isObj(o["metadata"]))
    throw badRequest(`${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: metadata must be an object`);
  const unknown = pruneUnknown(`${def.resource}.${def.group}`, o).map((p) => `unknown field "${p.slice(1)}"`);
  if (unknown.length > 0 && fv?.mode === "Strict")
    throw badRequest(
      `${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: strict decoding error: ${unknown.join(", ")}`,
    );
  if (fv?.mode === "Warn") fv.warnings.push(...unknown);
  for (const p of [...(timeFields["*"] ?? []), ...(timeFields[def.resource] ?? [])])
    visit(o, p, (v) => parseTime(def.kind, def.version, v, false));
  for (const p of microTimeFields[def.resource] ?? []) visit(o, p, (v) => parseTime(def.kind, def.version, v, true));
  if (def.resource === "secrets") checkBase64(def.kind, def.version, o["data"]);
  if (def.resource === "configmaps") {
    const bd = o["binaryData"];
    checkBase64(def.kind, def.version, bd);
  }
  const { kind: _k, apiVersion: _a, ...rest } = o;
  return { kind: def.kind, apiVersion, ...rest };
}

/** A metav1.Time for "now" (second precision, UTC). */
export function timeNow(nowMs: number): string {
  return `${new Date(nowMs).toISOString().slice(0, 19)}Z`;
}
