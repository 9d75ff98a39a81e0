/** Field validation the agent can trip over; failures become 422 Invalid with the Kind in details. */
import type { ResourceDef } from "./resources.ts";
import type { FieldError } from "./status.ts";
import { isObj } from "./merge-patch.ts";

type Obj = Record<string, unknown>;

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;

const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const QNAME_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LVALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

const inv = (field: string, value: unknown, detail: string): FieldError => ({ type: "FieldValueInvalid", field, value, detail });
const req = (field: string, detail = ""): FieldError => ({ type: "FieldValueRequired", field, detail });

/** IsDNS1123Subdomain's messages. */
function subdomainMessages(v: string): string[] {
  const msgs: string[] = [];
  if (v.length > 253) msgs.push("must be no more than 253 characters");
  if (!DNS1123_SUBDOMAIN.test(v)) msgs.push(SUBDOMAIN_MSG);
  return msgs;
}

/** IsQualifiedName's messages, one Invalid error each (ValidateQualifiedName). */
function qualifiedNameErrors(field: string, key: string): FieldError[] {
  const parts = key.split("/");
  if (parts.length > 2)
    return [
      inv(
        field,
        key,
        `a qualified ${QNAME_MSG.slice("name part ".length)} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
      ),
    ];
  const name = parts.length === 2 ? parts[1]! : parts[0]!;
  const msgs: string[] = [];
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix === "") msgs.push("prefix part must be non-empty");
    else msgs.push(...subdomainMessages(prefix).map((m) => `prefix part ${m}`));
  }
  if (name.length === 0) msgs.push("name part must be non-empty");
  else if (name.length > 63) msgs.push("name part must be no more than 63 characters");
  if (!QUALIFIED_NAME.test(name)) msgs.push(QNAME_MSG);
  return msgs.map((m) => inv(field, key, m));
}

/** IsValidPathSegmentName: the only rule for names of core/v1 Events and CSRs (checked by the generic meta validation). */
function pathSegmentMessages(name: string): string[] {
  if (name === "." || name === "..") return [`may not be '${name}'`];
  return ["/", "%"].filter((c) => name.includes(c)).map((c) => `may not contain '${c}'`);
}

type NameRule = "subdomain" | "label" | "pathSegment";

function nameRule(def: ResourceDef): NameRule {
  if (def.resource === "namespaces") return "label";
  if (def.resource === "certificatesigningrequests" || (def.resource === "events" && def.group === "")) return "pathSegment";
  return "subdomain";
}

function validateMeta(rule: NameRule, o: Obj): FieldError[] {
  const m = o["metadata"] as Obj;
  const errs: FieldError[] = [];
  const name = m["name"];
  if (typeof name !== "string" || name === "") errs.push(req("metadata.name", "name or generateName is required"));
  else if (rule === "pathSegment") errs.push(...pathSegmentMessages(name).map((msg) => inv("metadata.name", name, msg)));
  else {
    const label = rule === "label";
    const re = label ? DNS1123_LABEL : DNS1123_SUBDOMAIN;
    if (name.length > (label ? 63 : 253) || !re.test(name)) errs.push(inv("metadata.name", name, label ? LABEL_MSG : SUBDOMAIN_MSG));
  }
  const labels = m["labels"];
  if (labels !== undefined && labels !== null) {
    if (!isObj(labels)) errs.push(inv("metadata.labels", labels, "must be a map of strings"));
    else
      for (const [k, v] of Object.entries(labels)) {
        errs.push(...qualifiedNameErrors("metadata.labels", k));
        if (typeof v !== "string" || v.length > 63 || !LABEL_VALUE.test(v)) errs.push(inv("metadata.labels", v, LVALUE_MSG));
      }
  }
  const ann = m["annotations"];
  if (ann !== undefined && ann !== null) {
    if (!isObj(ann)) errs.push(inv("metadata.annotations", ann, "must be a map of strings"));
    else {
      for (const k of Object.keys(ann)) errs.push(...qualifiedNameErrors("metadata.annotations", k.toLowerCase()));
      if (JSON.stringify(ann).length > 256 * 1024)
        errs.push({ type: "FieldValueForbidden", field: "metadata.annotations", detail: "may not be more than 262144 bytes" });
    }
  }
  const refs = m["ownerReferences"];
  if (Array.isArray(refs))
    refs.forEach((r, i) => {
      const f = `metadata.ownerReferences[${i}]`;
      if (!isObj(r)) {
        errs.push(inv(f, r, "must be an object"));
        return;
      }
      if (!r["apiVersion"]) errs.push(inv(`${f}.apiVersion`, r["apiVersion"] ?? "", "version must not be empty"));
      if (!r["kind"]) errs.push(inv(`${f}.kind`, r["kind"] ?? "", "kind must not be empty"));
      if (!r["name"]) errs.push(inv(`${f}.name`, r["name"] ?? "", "name must not be empty"));
      if (!r["uid"]) errs.push(inv(`${f}.uid`, r["uid"] ?? "", "uid must not be empty"));
    });
  if (Array.isArray(refs) && refs.filter((r) => isObj(r) && r["controller"] === true).length > 1)
    errs.push(inv("metadata.ownerReferences", refs, "Only one reference can have Controller set to true"));
  return errs;
}

const str = (v: unknown): string => (typeof v === "string" ? v : "");

const LIMIT_128 = "can have at most 128 characters";

/**
 * legacyValidateEvent: every Event write. The reporting controller's field is named as the request's version
 * calls it (`reportingComponent` in core/v1, `reportingController` in events.k8s.io/v1).
 */
function legacyEventErrors(o: Obj, coreRequest: boolean): FieldError[] {
  const ns = str((o["metadata"] as Obj)["namespace"]);
  const involved = isObj(o["involvedObject"]) ? (o["involvedObject"] as Obj) : {};
  const ins = str(involved["namespace"]);
  const errs: FieldError[] = [];
  const nsErr = inv("involvedObject.namespace", ins, "does not match event.namespace");
  if (o["eventTime"] === undefined || o["eventTime"] === null) {
    if (ins === "" ? ns !== "" && ns !== "default" : ns !== ins) errs.push(nsErr);
  } else {
    if (ins === "" && ns !== "default" && ns !== "kube-system") errs.push(nsErr);
    const rcField = coreRequest ? "reportingComponent" : "reportingController";
    const rc = str(o["reportingComponent"]);
    if (rc === "") errs.push(req(rcField));
    errs.push(...qualifiedNameErrors(rcField, rc));
    const ri = str(o["reportingInstance"]);
    if (ri === "") errs.push(req("reportingInstance"));
    if (ri.length > 128) errs.push(inv("reportingInstance", "", LIMIT_128));
    if (str(o["action"]) === "") errs.push(req("action"));
    if (str(o["action"]).length > 128) errs.push(inv("action", "", LIMIT_128));
    if (str(o["reason"]) === "") errs.push(req("reason"));
    if (str(o["reason"]).length > 128) errs.push(inv("reason", "", LIMIT_128));
    if (str(o["message"]).length > 1024) errs.push(inv("message", "", "can have at most 1024 characters"));
  }
  errs.push(...subdomainMessages(ns).map((msg) => inv("namespace", ns, msg)));
  return errs;
}

/** ValidateEventCreate for events.k8s.io/v1: the legacy rules, then object meta, series and the strict fields (internal field names). */
function strictEventErrors(o: Obj): FieldError[] {
  const errs = [...legacyEventErrors(o, false), ...validateMeta("subdomain", o)];
  if (isObj(o["series"])) {
    const series = o["series"] as Obj;
    if (typeof series["count"] !== "number" || series["count"] < 2) errs.push(inv("series.count", "", "should be at least 2"));
    if (series["lastObservedTime"] === undefined || series["lastObservedTime"] === null) errs.push(req("series.lastObservedTime"));
  }
  if (o["eventTime"] === undefined || o["eventTime"] === null) errs.push(req("eventTime"));
  if (o["type"] !== "Normal" && o["type"] !== "Warning") errs.push(inv("type", "", `has invalid value: ${str(o["type"])}`));
  if (o["firstTimestamp"] !== undefined && o["firstTimestamp"] !== null) errs.push(inv("firstTimestamp", "", "needs to be unset"));
  if (o["lastTimestamp"] !== undefined && o["lastTimestamp"] !== null) errs.push(inv("lastTimestamp", "", "needs to be unset"));
  if (typeof o["count"] === "number" && o["count"] !== 0) errs.push(inv("count", "", "needs to be unset"));
  const src = isObj(o["source"]) ? (o["source"] as Obj) : {};
  if (str(src["component"]) !== "" || str(src["host"]) !== "") errs.push(inv("source", "", "needs to be unset"));
  return errs;
}

function validateLease(o: Obj): FieldError[] {
  const spec = isObj(o["spec"]) ? (o["spec"] as Obj) : {};
  const errs: FieldError[] = [];
  const d = spec["leaseDurationSeconds"];
  if (d !== undefined && d !== null && (typeof d !== "number" || d <= 0))
    errs.push(inv("spec.leaseDurationSeconds", d, "must be greater than 0"));
  const t = spec["leaseTransitions"];
  if (t !== undefined && t !== null && (typeof t !== "number" || t < 0))
    errs.push(inv("spec.leaseTransitions", t, "must be greater than or equal to 0"));
  return errs;
}

const TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"];

function validateNode(o: Obj): FieldError[] {
  const spec = isObj(o["spec"]) ? (o["spec"] as Obj) : {};
  const taints = Array.isArray(spec["taints"]) ? (spec["taints"] as unknown[]) : [];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  taints.forEach((t, i) => {
    if (!isObj(t)) return;
    const key = String(t["key"] ?? "");
    errs.push(...qualifiedNameErrors(`spec.taints[${i}].key`, key));
    if (!TAINT_EFFECTS.includes(String(t["effect"])))
      errs.push({
        type: "FieldValueNotSupported",
        field: `spec.taints[${i}].effect`,
        value: t["effect"],
        detail: `supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"`,
      });
    const id = `${key}:${String(t["effect"])}`;
    if (seen.has(id)) errs.push({ type: "FieldValueDuplicate", field: `spec.taints[${i}]`, value: t, detail: "" });
    seen.add(id);
  });
  return errs;
}

function validateSecret(o: Obj, old: Obj | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const data = isObj(o["data"]) ? (o["data"] as Obj) : {};
  for (const k of Object.keys(data))
    if (!SECRET_KEY.test(k)) errs.push(inv("data", k, "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"));
  if (old !== undefined) {
    if (old["type"] !== o["type"]) errs.push(inv("type", o["type"], "field is immutable"));
    if (old["immutable"] === true && JSON.stringify(old["data"]) !== JSON.stringify(o["data"]))
      errs.push({ type: "FieldValueForbidden", field: "data", detail: "field is immutable when `immutable` is set" });
  }
  return errs;
}

function validateCsr(o: Obj): FieldError[] {
  const spec = isObj(o["spec"]) ? (o["spec"] as Obj) : {};
  const errs: FieldError[] = [];
  const request = spec["request"];
  if (typeof request !== "string" || request === "") errs.push(req("spec.request"));
  else {
    const pem = Buffer.from(request, "base64").toString("utf8");
    if (!pem.includes("-----BEGIN CERTIFICATE REQUEST-----"))
      errs.push(inv("spec.request", "[]byte{...}", "PEM block type must be CERTIFICATE REQUEST"));
  }
  if (typeof spec["signerName"] !== "string" || spec["signerName"] === "") errs.push(req("spec.signerName"));
  if (!Array.isArray(spec["usages"]) || spec["usages"].length === 0) errs.push(req("spec.usages"));
  const exp = spec["expirationSeconds"];
  if (exp !== undefined && exp !== null && (typeof exp !== "number" || exp < 600))
    errs.push(inv("spec.expirationSeconds", exp, "may not specify a duration less than 600 seconds (10 minutes)"));
  const status = isObj(o["status"]) ? (o["status"] as Obj) : {};
  const conds = Array.isArray(status["conditions"]) ? (status["conditions"] as unknown[]) : [];
  const types = conds.filter(isObj).map((c) => String(c["type"]));
  if (types.includes("Approved") && types.includes("Denied"))
    errs.push(inv("status.conditions", "Approved", "Approved and Denied conditions are mutually exclusive"));
  for (const t of new Set(types))
    if (types.filter((x) => x === t).length > 1)
      errs.push({ type: "FieldValueDuplicate", field: "status.conditions", value: t, detail: "" });
  return errs;
}

function metaErrors(def: ResourceDef, o: Obj, old: Obj | undefined): FieldError[] {
  const errs = validateMeta(nameRule(def), o);
  if (old !== undefined) {
    const m = o["metadata"] as Obj;
    const om = old["metadata"] as Obj;
    if (m["name"] !== om["name"]) errs.push(inv("metadata.name", m["name"], "field is immutable"));
  }
  return errs;
}

/**
 * All validation errors of `o` (to be stored); `old` is the stored object on update. Like the registry, the type's
 * own validation comes first; Events validate object meta only afterwards (generic BeforeCreate/BeforeUpdate check,
 * path-segment names), and only when their own rules passed.
 */
export function validateObject(def: ResourceDef, o: Obj, old?: Obj): FieldError[] {
  if (def.resource === "events") {
    // updates get the legacy rules only (the immutability checks of events.k8s.io updates are not modelled)
    const own = old === undefined && def.group === "events.k8s.io" ? strictEventErrors(o) : legacyEventErrors(o, def.group === "");
    return own.length > 0 ? own : metaErrors(def, o, old);
  }
  const errs = metaErrors(def, o, old);
  switch (def.resource) {
    case "leases":
      return [...errs, ...validateLease(o)];
    case "nodes":
      return [...errs, ...validateNode(o)];
    case "secrets":
      return [...errs, ...validateSecret(o, old)];
    case "certificatesigningrequests":
      return [...errs, ...validateCsr(o)];
    default:
      return errs;
  }
}
