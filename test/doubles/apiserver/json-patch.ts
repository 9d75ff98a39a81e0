/** JSON patch (RFC 6902). Undecodable patches are 400; operations that cannot apply (unknown op too) are 422, as in kube-apiserver. */
import { badRequest, unprocessablePatch } from "./status.ts";
import { deepEqual, isObj } from "./merge-patch.ts";

interface Op {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
  hasValue: boolean;
}

function parseOps(patch: unknown): Op[] {
  if (!Array.isArray(patch)) throw badRequest("json: cannot unmarshal object into Go value of type jsonpatch.Patch");
  return patch.map((raw) => {
    // the handler first decodes the operations strictly (wrong JSON types are 400); missing fields fail on apply (422)
    if (!isObj(raw)) throw badRequest("error decoding patch: json: cannot unmarshal into Go value of type handlers.jsonPatchOp");
    for (const f of ["op", "path", "from"])
      if (raw[f] !== undefined && raw[f] !== null && typeof raw[f] !== "string")
        throw badRequest(`error decoding patch: json: cannot unmarshal into Go struct field jsonPatchOp.${f} of type string`);
    const kind = typeof raw["op"] === "string" ? raw["op"] : "unknown";
    const path = raw["path"];
    if (typeof path !== "string") throw unprocessablePatch(`${kind} operation does not apply: missing path`);
    const op: Op = { op: kind, path, hasValue: Object.hasOwn(raw, "value"), value: raw["value"] };
    if (typeof raw["from"] === "string") op.from = raw["from"];
    return op;
  });
}

function tokens(pointer: string): string[] {
  if (pointer === "") return [];
  if (!pointer.startsWith("/")) throw unprocessablePatch(`invalid JSON pointer: ${pointer}`);
  return pointer
    .slice(1)
    .split("/")
    .map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
}

type Container = Record<string, unknown> | unknown[];

/** Walks to the parent of the pointer's last token; fails when an intermediate is missing. */
function parentOf(doc: unknown, pointer: string, op: string): [Container, string] {
  const toks = tokens(pointer);
  const last = toks.pop();
  if (last === undefined) throw unprocessablePatch(`${op} operation does not apply: cannot operate on the document root`);
  let cur: unknown = doc;
  for (const t of toks) {
    if (Array.isArray(cur)) cur = cur[Number(t)];
    else if (isObj(cur)) cur = cur[t];
    else cur = undefined;
    if (cur === undefined || cur === null)
      throw unprocessablePatch(`${op} operation does not apply: doc is missing path: "${pointer}": missing value`);
  }
  if (!Array.isArray(cur) && !isObj(cur))
    throw unprocessablePatch(`${op} operation does not apply: doc is missing path: "${pointer}": missing value`);
  return [cur, last];
}

function index(arr: unknown[], t: string, forInsert: boolean, op: string, pointer: string): number {
  if (forInsert && t === "-") return arr.length;
  if (!/^\d+$/.test(t)) throw unprocessablePatch(`${op} operation does not apply: invalid index in "${pointer}"`);
  const i = Number(t);
  if (i > arr.length || (!forInsert && i === arr.length))
    throw unprocessablePatch(`${op} operation does not apply: doc is missing path: "${pointer}": missing value`);
  return i;
}

function getAt(doc: unknown, pointer: string, op: string): unknown {
  if (pointer === "") return doc;
  const [c, t] = parentOf(doc, pointer, op);
  const v = Array.isArray(c) ? c[index(c, t, false, op, pointer)] : Object.hasOwn(c, t) ? c[t] : undefined;
  if (v === undefined) throw unprocessablePatch(`${op} operation does not apply: doc is missing path: "${pointer}": missing value`);
  return v;
}

function add(doc: unknown, pointer: string, value: unknown, op: string): unknown {
  if (pointer === "") return value;
  const [c, t] = parentOf(doc, pointer, op);
  if (Array.isArray(c)) c.splice(index(c, t, true, op, pointer), 0, value);
  else c[t] = value;
  return doc;
}

function remove(doc: unknown, pointer: string, op: string): unknown {
  const [c, t] = parentOf(doc, pointer, op);
  if (Array.isArray(c)) c.splice(index(c, t, false, op, pointer), 1);
  else {
    if (!Object.hasOwn(c, t)) throw unprocessablePatch(`Unable to remove nonexistent key: ${t}: missing value`);
    delete c[t];
  }
  return doc;
}

export function applyJsonPatch(original: unknown, patch: unknown): unknown {
  const ops = parseOps(patch);
  let doc: unknown = structuredClone(original);
  for (const o of ops) {
    const needValue = o.op === "add" || o.op === "replace" || o.op === "test";
    if (needValue && !o.hasValue) throw unprocessablePatch(`${o.op} operation does not apply: missing value`);
    switch (o.op) {
      case "add":
        doc = add(doc, o.path, structuredClone(o.value), "add");
        break;
      case "remove":
        doc = remove(doc, o.path, "remove");
        break;
      case "replace":
        getAt(doc, o.path, "replace");
        if (o.path === "") doc = structuredClone(o.value);
        else {
          const [c, t] = parentOf(doc, o.path, "replace");
          if (Array.isArray(c)) c[index(c, t, false, "replace", o.path)] = structuredClone(o.value);
          else c[t] = structuredClone(o.value);
        }
        break;
      case "move": {
        if (o.from === undefined) throw unprocessablePatch("move operation does not apply: missing from");
        const v = getAt(doc, o.from, "move");
        doc = remove(doc, o.from, "move");
        doc = add(doc, o.path, v, "move");
        break;
      }
      case "copy": {
        if (o.from === undefined) throw unprocessablePatch("copy operation does not apply: missing from");
        doc = add(doc, o.path, structuredClone(getAt(doc, o.from, "copy")), "copy");
        break;
      }
      case "test": {
        let cur: unknown;
        try {
          cur = getAt(doc, o.path, "test");
        } catch {
          // a missing path compares as absent, which only equals an explicit null test value
          cur = undefined;
        }
        if (!deepEqual(cur ?? null, o.value)) throw unprocessablePatch(`testing value ${o.path} failed: test failed`);
        break;
      }
      default:
        throw unprocessablePatch(`Unexpected kind: ${o.op}`);
    }
  }
  return doc;
}
