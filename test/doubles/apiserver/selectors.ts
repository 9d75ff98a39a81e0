/** Label and field selectors with the grammar and semantics of apimachinery's labels.Parse / fields.ParseSelector. */
import { badRequest } from "./status.ts";

export type LabelOp = "=" | "!=" | "in" | "notin" | "exists" | "!" | "gt" | "lt";
export interface LabelRequirement {
  key: string;
  op: LabelOp;
  values: string[];
}

export interface FieldRequirement {
  field: string;
  op: "=" | "!=";
  value: string;
}

const KEY_RE = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$/;
const VALUE_RE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Splits on commas that are not inside parentheses. */
function splitTop(s: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let cur = "";
  for (const ch of s) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (ch === "," && depth === 0) {
      parts.push(cur);
      cur = "";
    } else cur += ch;
  }
  parts.push(cur);
  return parts;
}

function checkKey(key: string): void {
  if (!KEY_RE.test(key)) throw badRequest(`unable to parse requirement: invalid label key "${key}"`);
}
function checkValue(v: string): void {
  if (v.length > 63 || !VALUE_RE.test(v)) throw badRequest(`unable to parse requirement: invalid label value: "${v}"`);
}

function parseLabelTerm(raw: string): LabelRequirement {
  const t = raw.trim();
  let m = /^!\s*([^\s=!<>(),]+)$/.exec(t);
  if (m) {
    checkKey(m[1]!);
    return { key: m[1]!, op: "!", values: [] };
  }
  m = /^([^\s=!<>(),]+)\s+(in|notin)\s*\(([^()]*)\)$/.exec(t);
  if (m) {
    checkKey(m[1]!);
    const values = m[3]!.split(",").map((v) => v.trim());
    values.forEach(checkValue);
    return { key: m[1]!, op: m[2] === "in" ? "in" : "notin", values };
  }
  m = /^([^\s=!<>(),]+)\s*(==|=|!=|>|<)\s*([^\s=!<>(),]*)$/.exec(t);
  if (m) {
    checkKey(m[1]!);
    const op = m[2]!;
    const v = m[3]!;
    if (op === ">" || op === "<") {
      if (!/^-?\d+$/.test(v)) throw badRequest(`unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer`);
      return { key: m[1]!, op: op === ">" ? "gt" : "lt", values: [v] };
    }
    checkValue(v);
    return { key: m[1]!, op: op === "!=" ? "!=" : "=", values: [v] };
  }
  m = /^([^\s=!<>(),]+)$/.exec(t);
  if (m) {
    checkKey(m[1]!);
    return { key: m[1]!, op: "exists", values: [] };
  }
  throw badRequest(`unable to parse requirement: found '${t}', expected: identifier`);
}

export function parseLabelSelector(s: string | null | undefined): LabelRequirement[] {
  if (s === null || s === undefined || s.trim() === "") return [];
  return splitTop(s).map(parseLabelTerm);
}

export function matchLabels(reqs: readonly LabelRequirement[], labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  return reqs.every((r) => {
    const has = Object.hasOwn(l, r.key);
    const v = l[r.key];
    switch (r.op) {
      case "=":
      case "in":
        return has && r.values.includes(v!);
      case "!=":
      case "notin":
        return !has || !r.values.includes(v!);
      case "exists":
        return has;
      case "!":
        return !has;
      case "gt":
      case "lt": {
        if (!has || !/^-?\d+$/.test(v!)) return false;
        const n = Number(v);
        return r.op === "gt" ? n > Number(r.values[0]) : n < Number(r.values[0]);
      }
    }
    return false;
  });
}

/** Un-escapes `\,` `\=` `\\` as fields.ParseSelector does. */
function unescapeSelector(s: string): string {
  return s.replace(/\\(.)/g, "$1");
}

export function parseFieldSelector(s: string | null | undefined): FieldRequirement[] {
  if (s === null || s === undefined || s.trim() === "") return [];
  const terms = s.split(/(?<!\\),/);
  return terms.map((term) => {
    const m = /^(.*?)(==|!=|=)(.*)$/.exec(term);
    if (!m || m[1] === "") throw badRequest(`invalid selector: '${s}'; can't understand '${term}'`);
    return { field: m[1]!.trim(), op: m[2] === "!=" ? "!=" : "=", value: unescapeSelector(m[3]!) };
  });
}

type Obj = Record<string, unknown>;
const str = (v: unknown): string => (typeof v === "string" ? v : v === undefined || v === null ? "" : String(v));
const sub = (o: unknown, k: string): Obj => {
  const v = typeof o === "object" && o !== null ? (o as Obj)[k] : undefined;
  return typeof v === "object" && v !== null ? (v as Obj) : {};
};

/** Field values each resource type supports in selectors (registry GetAttrs / field label conversion). */
const fieldsByResource: Record<string, Record<string, (o: Obj) => string>> = {
  pods: {
    "spec.nodeName": (o) => str(sub(o, "spec")["nodeName"]),
    "spec.restartPolicy": (o) => str(sub(o, "spec")["restartPolicy"]),
    "spec.schedulerName": (o) => str(sub(o, "spec")["schedulerName"]),
    "spec.serviceAccountName": (o) => str(sub(o, "spec")["serviceAccountName"]),
    "spec.hostNetwork": (o) => String(sub(o, "spec")["hostNetwork"] === true),
    "status.phase": (o) => str(sub(o, "status")["phase"]),
    "status.podIP": (o) => str(sub(o, "status")["podIP"]),
    "status.nominatedNodeName": (o) => str(sub(o, "status")["nominatedNodeName"]),
  },
  secrets: { type: (o) => str(o["type"]) },
  nodes: { "spec.unschedulable": (o) => String(sub(o, "spec")["unschedulable"] === true) },
  certificatesigningrequests: { "spec.signerName": (o) => str(sub(o, "spec")["signerName"]) },
  events: {
    "involvedObject.kind": (o) => str(sub(o, "involvedObject")["kind"]),
    "involvedObject.namespace": (o) => str(sub(o, "involvedObject")["namespace"]),
    "involvedObject.name": (o) => str(sub(o, "involvedObject")["name"]),
    "involvedObject.uid": (o) => str(sub(o, "involvedObject")["uid"]),
    "involvedObject.apiVersion": (o) => str(sub(o, "involvedObject")["apiVersion"]),
    "involvedObject.resourceVersion": (o) => str(sub(o, "involvedObject")["resourceVersion"]),
    "involvedObject.fieldPath": (o) => str(sub(o, "involvedObject")["fieldPath"]),
    reason: (o) => str(o["reason"]),
    reportingComponent: (o) => str(o["reportingComponent"]),
    source: (o) => str(sub(o, "source")["component"]),
    type: (o) => str(o["type"]),
  },
};

/** Rejects fields the resource does not index, like the real server (400 BadRequest). */
export function checkFieldSelector(resource: string, reqs: readonly FieldRequirement[]): void {
  for (const r of reqs) {
    if (r.field === "metadata.name" || r.field === "metadata.namespace") continue;
    if (fieldsByResource[resource]?.[r.field] === undefined) throw badRequest(`field label not supported: ${r.field}`);
  }
}

function fieldValue(resource: string, field: string, o: Obj): string {
  if (field === "metadata.name") return str(sub(o, "metadata")["name"]);
  if (field === "metadata.namespace") return str(sub(o, "metadata")["namespace"]);
  return fieldsByResource[resource]?.[field]?.(o) ?? "";
}

export function matchFields(resource: string, reqs: readonly FieldRequirement[], o: Obj): boolean {
  return reqs.every((r) => (fieldValue(resource, r.field, o) === r.value) === (r.op === "="));
}

export interface Selector {
  labels: LabelRequirement[];
  fields: FieldRequirement[];
}

export function matchSelector(resource: string, sel: Selector, o: Obj): boolean {
  const labels = sub(o, "metadata")["labels"] as Record<string, string> | undefined;
  return matchLabels(sel.labels, labels) && matchFields(resource, sel.fields, o);
}
