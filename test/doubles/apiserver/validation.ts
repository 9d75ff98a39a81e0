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

function qualifiedNameErrors(field: string, key: string): FieldError[] {
  const parts = key.split("/");
  const name = parts.length === 2 ? parts[1]! : parts[0]!;
  const errs: FieldError[] = [];
  if (parts.length > 2) return [inv(field, key, "a qualified name must consist of alphanumeric characters, '-', '_' or '.'")];
  if (parts.length === 2 && (parts[0]!.length > 253 || !DNS1123_SUBDOMAIN.test(parts[0]!)))
    errs.push(inv(field, key, `prefix part ${SUBDOMAIN_MSG}`));
  if (name.length === 0 || name.length > 63 || !QUALIFIED_NAME.test(name)) errs.push(inv(field, key, QNAME_MSG));
  return errs;
}

function validateMeta(def: ResourceDef, o: Obj): FieldError[] {
  const m = o["metadata"] as Obj;
  const errs: FieldError[] = [];
  const name = m["name"];
  if (typeof name !== "string" || name === "") errs.push(req("metadata.name", "name or generateName is required"));
  else if (def.resource === "certificatesigningrequests") {
    // ValidateCertificateRequestName accepts any name; only the path-segment rules apply
    if (name === "." || name === ".." || /[/%]/.test(name)) errs.push(inv("metadata.name", name, `may not contain '/' or '%'`));
  } else {
    const label = def.resource === "namespaces";
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
      if (JSON.stringify(ann).length > 256 * 1024) errs.push({ type: "FieldValueForbidden", field: "metadata.annotations", detail: "may not be more than 262144 bytes" });
    }
  }
  const refs = m["ownerReferences"];
  if (Array.isArray(refs))
    refs.forEach((r, i) => {
      const f = `metadata.ownerReferences[${i}]`;
      if (!isObj(r)) return errs.push(inv(f, r, "must be an object"));
      if (!r["apiVersion"]) errs.push(inv(`${f}.apiVersion`, r["apiVersion"] ?? "", "version must not be empty"));
      if (!r["kind"]) errs.push(inv(`${f}.kind`, r["kind"] ?? "", "kind must not be empty"));
      if (!r["name"]) errs.push(inv(`${f}.name`, r["name"] ?? "", "name must not be empty"));
      if (!r["uid"]) errs.push(inv(`${f}.uid`, r["uid"] ?? "", "uid must not be empty"));
      return undefined;
    });
  if (Array.isArray(refs) && refs.filter((r) => isObj(r) && r["controller"] === true).length > 1)
    errs.push(inv("metadata.ownerReferences", refs, "Only one reference can have Controller set to true"));
  return errs;
}

const str = (v: unknown): string => (typeof v === "string" ? v : "");

/** ValidateEventCreate: legacy rules for core/v1, plus the strict ones for events.k8s.io/v1 (`strict`). */
function validateEvent(o: Obj, strict: boolean): FieldError[] {
  const ns = str((o["metadata"] as Obj)["namespace"]);
  const involved = isObj(o["involvedObject"]) ? (o["involvedObject"] as Obj) : {};
  const ins = str(involved["namespace"]);
  const legacy = o["eventTime"] === undefined || o["eventTime"] === null;
  const errs: FieldError[] = [];
  const nsErr = inv("involvedObject.namespace", ins, "does not match event.namespace");
  if (legacy) {
    if (ins === "" ? ns !== "" && ns !== "default" : ns !== ins) errs.push(nsErr);
  } else {
    if ((ins === "" && ns !== "default" && ns !== "kube-system") || (ins !== "" && ns !== ins)) errs.push(nsErr);
    const rcField = strict ? "reportingController" : "source";
    const rc = str(o["reportingComponent"]);
    if (rc === "") errs.push(req(rcField));
    else errs.push(...qualifiedNameErrors(rcField, rc));
    if (str(o["reportingInstance"]) === "") errs.push(req("reportingInstance"));
    else if (str(o["reportingInstance"]).length > 128) errs.push(inv("reportingInstance", "", "can have at most 128 characters"));
    if (str(o["action"]) === "") errs.push(req("action"));
    else if (str(o["action"]).length > 128) errs.push(inv("action", "", "can have at most 128 characters"));
    if (str(o["reason"]) === "") errs.push(req("reason"));
    else if (str(o["reason"]).length > 128) errs.push(inv("reason", "", "can have at most 128 characters"));
    if (str(o["message"]).length > 1024) errs.push(inv("note", "", "can have at most 1024 characters"));
  }
  if (!strict) return errs;
  if (legacy) errs.push(req("eventTime"));
  if (o["type"] !== "Normal" && o["type"] !== "Warning") errs.push(inv("type", "", `has invalid value: ${str(o["type"])}`));
  if (o["firstTimestamp"] !== undefined && o["firstTimestamp"] !== null) errs.push(inv("deprecatedFirstTimestamp", "", "needs to be unset"));
  if (o["lastTimestamp"] !== undefined && o["lastTimestamp"] !== null) errs.push(inv("deprecatedLastTimestamp", "", "needs to be unset"));
  if (typeof o["count"] === "number" && o["count"] !== 0) errs.push(inv("deprecatedCount", "", "needs to be unset"));
  const src = isObj(o["source"]) ? (o["source"] as Obj) : {};
  if (str(src["component"]) !== "" || str(src["host"]) !== "") errs.push(inv("deprecatedSource", "", "needs to be unset"));
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
      errs.push({ type: "FieldValueNotSupported", field: `spec.taints[${i}].effect`, value: t["effect"], detail: `supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"` });
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
  for (const t of new Set(types)) if (types.filter((x) => x === t).length > 1) errs.push({ type: "FieldValueDuplicate", field: "status.conditions", value: t, detail: "" });
  return errs;
}

/** All validation errors of `o` (to be stored); `old` is the stored object on update. */
export function validateObject(def: ResourceDef, o: Obj, old?: Obj): FieldError[] {
  const errs = validateMeta(def, o);
  if (old !== undefined) {
    const m = o["metadata"] as Obj;
    const om = old["metadata"] as Obj;
    if (m["name"] !== om["name"]) errs.push(inv("metadata.name", m["name"], "field is immutable"));
  }
  switch (def.resource) {
    case "events":
      // updates get the legacy rules only (the immutability checks of events.k8s.io updates are not modelled)
      return [...errs, ...validateEvent(o, old === undefined && def.group === "events.k8s.io")];
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
