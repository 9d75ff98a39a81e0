/** The resource verbs over HTTP: get, list (+ paging, resourceVersion semantics), watch, create, update, patch, delete. */
import type { RequestInfo } from "./request-info.ts";
import type { ResourceDef } from "./resources.ts";
import type { UserInfo } from "./user.ts";
import type { HandlerDeps } from "./handler.ts";
import type { Obj, PatchKind } from "./store.ts";
import type { FieldValidation } from "./decode.ts";
import type { FieldError } from "./status.ts";
import { jsonResponse, readBody } from "./responses.ts";
import { apiVersionOfDef } from "./resources.ts";
import {
  badRequest,
  expired,
  invalid,
  notFound,
  SimApiError,
  successStatus,
  tooLargeResourceVersion,
  unsupportedMediaType,
} from "./status.ts";
import { checkFieldSelector, parseFieldSelector, parseLabelSelector } from "./selectors.ts";
import { isObj } from "./merge-patch.ts";

const PATCH_TYPES: Record<string, PatchKind> = {
  "application/merge-patch+json": "merge",
  "application/strategic-merge-patch+json": "strategic",
  "application/json-patch+json": "json",
};

/** Server-side apply: consumed by the route, not modelled by the simulator. */
const APPLY_PATCH = "application/apply-patch+yaml";

const pageNotFound = (): SimApiError =>
  new SimApiError(404, "NotFound", "the server could not find the requested resource", {
    causes: [{ reason: "UnexpectedServerResponse", message: "404 page not found" }],
  });

const methodNotAllowed = (): SimApiError =>
  new SimApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource");

function parseRv(s: string | null): number | undefined {
  if (s === null || s === "") return undefined;
  if (!/^\d+$/.test(s)) throw badRequest(`invalid resource version: ${s}`);
  return Number(s);
}

/** Query booleans as apimachinery converts them: absent, "0" and "false" (any case) are false, anything else true. */
const boolParam = (v: string | null): boolean => v !== null && v !== "0" && v.toLowerCase() !== "false";

const FIELD_VALIDATION = ["Strict", "Warn", "Ignore"] as const;

function fieldValidation(q: URLSearchParams): FieldValidation {
  const raw = q.get("fieldValidation") ?? "Warn";
  const mode = FIELD_VALIDATION.find((m) => m === raw);
  if (mode === undefined) throw badRequest(`fieldValidation parameter unsupported: ${raw}`);
  return { mode, warnings: [] };
}

/** Warnings as kube sends them: `Warning: 299 - "<text>"`. */
function withWarnings(res: Response, fv: FieldValidation): Response {
  for (const w of fv.warnings) res.headers.append("warning", `299 - ${JSON.stringify(w)}`);
  return res;
}

export async function serveResource(req: Request, url: URL, info: RequestInfo, user: UserInfo, d: HandlerDeps): Promise<Response> {
  const def = info.def;
  if (def === undefined || info.extra) throw pageNotFound();
  if (!def.namespaced && info.namespace !== "" && def.resource !== "namespaces") throw pageNotFound();
  if (info.subresource !== "" && !def.subresources.includes(info.subresource)) throw pageNotFound();
  const ns = def.namespaced ? info.namespace : "";
  const store = d.authz.store;
  const q = url.searchParams;
  const named = info.name !== "" && !(info.verb === "list" || info.verb === "watch");
  if ((info.verb === "create" && named) || ((info.verb === "update" || info.verb === "patch") && !named)) throw methodNotAllowed();
  switch (info.verb) {
    case "get": {
      const o = store.get(def, ns, info.name);
      if (o === undefined) throw notFound(def, info.name);
      return jsonResponse(200, o);
    }
    case "list":
      return await list(def, ns, q, d);
    case "watch":
      return watch(def, ns, q, d);
    case "create": {
      if (info.subresource !== "") throw pageNotFound();
      const body = await readBody(req);
      const fv = fieldValidation(q);
      return withWarnings(
        jsonResponse(
          201,
          store.create(def, body, def.namespaced ? { namespace: ns, user, fieldValidation: fv } : { user, fieldValidation: fv }),
        ),
        fv,
      );
    }
    case "update": {
      const body = await readBody(req);
      const m = isObj(body) && isObj(body["metadata"]) ? body["metadata"] : {};
      if (m["name"] !== undefined && m["name"] !== info.name)
        throw badRequest(`the name of the object (${String(m["name"])}) does not match the name on the URL (${info.name})`);
      const existed = store.peek(def, ns, info.name) !== undefined;
      const fv = fieldValidation(q);
      const opts = { subresource: info.subresource, user, fieldValidation: fv, ...(def.namespaced ? { namespace: ns } : {}) };
      const withName = isObj(body) ? { ...body, metadata: { ...m, name: info.name } } : body;
      const o = store.update(def, withName, opts);
      return withWarnings(jsonResponse(existed ? 200 : 201, o), fv);
    }
    case "patch": {
      const ct = (req.headers.get("content-type") ?? "").split(";")[0]!.trim();
      const type = PATCH_TYPES[ct];
      // go-restful refuses what the PATCH route does not consume before the handler runs (application/json too)
      if (type === undefined && ct !== APPLY_PATCH) throw unsupportedMediaType();
      if (type === undefined)
        throw new SimApiError(
          415,
          "UnsupportedMediaType",
          `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json`,
        );
      const body = await readBody(req);
      const fv = fieldValidation(q);
      return withWarnings(
        jsonResponse(200, store.patch(def, ns, info.name, type, body, { subresource: info.subresource, user, fieldValidation: fv })),
        fv,
      );
    }
    case "delete": {
      const text = await req.text();
      let opts: Obj = {};
      if (text.trim() !== "") {
        try {
          const parsed: unknown = JSON.parse(text);
          if (isObj(parsed)) opts = parsed;
        } catch (err) {
          throw badRequest(`error decoding DeleteOptions: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
      const graceQ = q.get("gracePeriodSeconds");
      const grace =
        graceQ !== null ? Number(graceQ) : typeof opts["gracePeriodSeconds"] === "number" ? opts["gracePeriodSeconds"] : undefined;
      const pre = isObj(opts["preconditions"]) ? opts["preconditions"] : {};
      const preconditions: { uid?: string; resourceVersion?: string } = {};
      if (typeof pre["uid"] === "string") preconditions.uid = pre["uid"];
      if (typeof pre["resourceVersion"] === "string") preconditions.resourceVersion = pre["resourceVersion"];
      const r = store.delete(def, ns, info.name, grace === undefined ? { preconditions } : { gracePeriodSeconds: grace, preconditions });
      if (!r.deleted || def.returnDeletedObject) return jsonResponse(200, r.object);
      return jsonResponse(200, successStatus(def, info.name, String((r.object["metadata"] as Obj)["uid"])));
    }
    default:
      throw methodNotAllowed();
  }
}

interface ContinueToken {
  rv: number;
  start: string;
}

/** ValidateListOptions for a LIST: every error at once, as the real server reports them. */
function validateListOptions(q: URLSearchParams): void {
  const rawRv = q.get("resourceVersion") ?? "";
  const match = q.get("resourceVersionMatch") ?? "";
  const errs: FieldError[] = [];
  const forbid = (field: string, detail: string) => errs.push({ type: "FieldValueForbidden", field, detail });
  if (match !== "") {
    if (rawRv === "") forbid("resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided");
    if ((q.get("continue") ?? "") !== "") forbid("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided");
    if (match !== "Exact" && match !== "NotOlderThan")
      errs.push({
        type: "FieldValueNotSupported",
        field: "resourceVersionMatch",
        value: match,
        detail: `supported values: "Exact", "NotOlderThan", ""`,
      });
    if (match === "Exact" && rawRv === "0")
      forbid("resourceVersionMatch", `resourceVersionMatch "exact" is forbidden for resourceVersion "0"`);
  }
  if (q.get("sendInitialEvents") !== null) forbid("sendInitialEvents", "sendInitialEvents is forbidden for list");
  if (errs.length > 0) throw invalid("meta.k8s.io", "ListOptions", "", errs);
}

async function list(def: ResourceDef, ns: string, q: URLSearchParams, d: HandlerDeps): Promise<Response> {
  const store = d.authz.store;
  validateListOptions(q);
  const fields = parseFieldSelector(q.get("fieldSelector"));
  checkFieldSelector(def.resource, fields);
  const sel = { labels: parseLabelSelector(q.get("labelSelector")), fields };
  const rv = parseRv(q.get("resourceVersion"));
  const match = q.get("resourceVersionMatch") ?? "";
  const limit = Number(q.get("limit") ?? "0");
  const cont = q.get("continue") ?? "";
  let at: number | undefined;
  let start = "";
  if (cont !== "") {
    let tok: ContinueToken;
    try {
      tok = JSON.parse(Buffer.from(cont, "base64url").toString("utf8")) as ContinueToken;
    } catch {
      throw badRequest("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)");
    }
    if (tok.rv < store.oldestResumableVersion)
      throw expired(
        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.",
      );
    at = tok.rv;
    start = tok.start;
  } else if (rv !== undefined && rv !== 0) {
    // like the watch cache: wait up to 3 s for the requested revision, then 504
    if (rv > store.resourceVersion && !(await store.waitForVersion(rv, 3000))) throw tooLargeResourceVersion(rv, store.resourceVersion);
    // a paged list with a resourceVersion and no match is served exactly (legacy semantics)
    if (match === "Exact" || (match === "" && limit > 0)) at = rv;
  }
  const listRv = at ?? store.resourceVersion;
  let items = store.select(def, ns, sel, at);
  const keyOf = (o: Obj) => `${String((o["metadata"] as Obj)["namespace"] ?? "")}/${String((o["metadata"] as Obj)["name"])}`;
  if (start !== "") items = items.filter((o) => keyOf(o) > start);
  const metadata: Obj = { resourceVersion: String(listRv) };
  if (limit > 0 && items.length > limit) {
    const rest = items.length - limit;
    items = items.slice(0, limit);
    metadata["continue"] = Buffer.from(JSON.stringify({ rv: listRv, start: keyOf(items[items.length - 1]!) })).toString("base64url");
    // Like kube-apiserver: the count is known only for an unfiltered list (ListMeta: with a label or field
    // selector it is left unset).
    if ((q.get("labelSelector") ?? "") === "" && (q.get("fieldSelector") ?? "") === "") metadata["remainingItemCount"] = rest;
  }
  // items of a typed list carry no kind/apiVersion on the wire
  const stripped = items.map(({ kind: _k, apiVersion: _a, ...rest }) => rest);
  return jsonResponse(200, { kind: `${def.kind}List`, apiVersion: apiVersionOfDef(def), metadata, items: stripped });
}

/**
 * Watch options as kube-apiserver v1.32 sees them: WatchList is beta and on, so SetListOptionsDefaults turns a watch
 * from resourceVersion "" or "0" without sendInitialEvents/resourceVersionMatch into sendInitialEvents=true,
 * resourceVersionMatch=NotOlderThan; validateWatchOptions then checks what the client sent explicitly.
 */
function watchOptions(q: URLSearchParams): { rv: number | undefined; sendInitialEvents: boolean | undefined; bookmarks: boolean } {
  const rawRv = q.get("resourceVersion") ?? "";
  const rv = parseRv(rawRv);
  let match = q.get("resourceVersionMatch") ?? "";
  const rawSend = q.get("sendInitialEvents");
  let sendInitialEvents = rawSend === null ? undefined : boolParam(rawSend);
  if (sendInitialEvents === undefined && match === "" && (rawRv === "" || rawRv === "0")) {
    sendInitialEvents = true;
    match = "NotOlderThan";
  }
  const errs: FieldError[] = [];
  if (sendInitialEvents !== undefined && match !== "NotOlderThan")
    errs.push({
      type: "FieldValueForbidden",
      field: "resourceVersionMatch",
      detail: "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
    });
  if (match !== "") {
    if (sendInitialEvents === undefined)
      errs.push({
        type: "FieldValueForbidden",
        field: "resourceVersionMatch",
        detail: "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
      });
    if (match !== "NotOlderThan")
      errs.push({
        type: "FieldValueNotSupported",
        field: "resourceVersionMatch",
        value: match,
        detail: `supported values: "NotOlderThan"`,
      });
    if ((q.get("continue") ?? "") !== "")
      errs.push({
        type: "FieldValueForbidden",
        field: "resourceVersionMatch",
        detail: "resourceVersionMatch is forbidden when continue is provided",
      });
  }
  if (errs.length > 0) throw invalid("meta.k8s.io", "ListOptions", "", errs);
  return { rv, sendInitialEvents, bookmarks: boolParam(q.get("allowWatchBookmarks")) };
}

function watch(def: ResourceDef, ns: string, q: URLSearchParams, d: HandlerDeps): Response {
  const store = d.authz.store;
  const fields = parseFieldSelector(q.get("fieldSelector"));
  checkFieldSelector(def.resource, fields);
  const sel = { labels: parseLabelSelector(q.get("labelSelector")), fields };
  const { rv, sendInitialEvents, bookmarks } = watchOptions(q);
  const timeoutQ = q.get("timeoutSeconds");
  const minT = d.minRequestTimeoutSec;
  const timeoutMs = timeoutQ !== null && Number(timeoutQ) > 0 ? Number(timeoutQ) * 1000 : (minT + Math.random() * minT) * 1000;
  const w = d.hub.open({
    def,
    namespace: ns,
    selector: sel,
    bookmarks,
    sendInitialEvents: sendInitialEvents === true,
    timeoutMs,
    // sendInitialEvents=false means "no replay": from the given resourceVersion, or from now
    fromRv:
      sendInitialEvents === true ? undefined : sendInitialEvents === false && (rv === undefined || rv === 0) ? store.resourceVersion : rv,
  });
  return new Response(w.stream, {
    status: 200,
    headers: { "content-type": "application/json", "cache-control": "no-cache, private", "transfer-encoding": "chunked" },
  });
}
