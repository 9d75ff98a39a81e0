/** Per-type create/update preparation (registry strategies and the admission plugins that matter here). */
import type { ResourceDef } from "./resources.ts";
import type { UserInfo } from "./user.ts";
import { isObj } from "./merge-patch.ts";
import { timeNow } from "./decode.ts";

type Obj = Record<string, unknown>;

export const meta = (o: Obj): Obj => o["metadata"] as Obj;
const sub = (o: Obj, k: string): Obj => (isObj(o[k]) ? (o[k] as Obj) : {});

const NOT_READY_TAINT = "node.kubernetes.io/not-ready";

/** Secret `stringData` is folded into `data` (base64) and never stored. */
function foldStringData(o: Obj): void {
  const sd = o["stringData"];
  if (isObj(sd)) {
    const data = isObj(o["data"]) ? (o["data"] as Obj) : {};
    for (const [k, v] of Object.entries(sd)) data[k] = Buffer.from(String(v)).toString("base64");
    o["data"] = data;
  }
  delete o["stringData"];
  if (o["type"] === undefined || o["type"] === "") o["type"] = "Opaque";
}

function podQos(o: Obj): string {
  const containers = sub(o, "spec")["containers"];
  const hasResources =
    Array.isArray(containers) && containers.some((c) => isObj(c) && isObj(c["resources"]) && Object.keys(c["resources"] as Obj).length > 0);
  return hasResources ? "Burstable" : "BestEffort";
}

export interface CreateContext {
  readonly user?: UserInfo;
  readonly nowMs: number;
}

export function prepareForCreate(def: ResourceDef, o: Obj, ctx: CreateContext): void {
  const m = meta(o);
  m["uid"] = crypto.randomUUID();
  m["creationTimestamp"] = timeNow(ctx.nowMs);
  delete m["deletionTimestamp"];
  delete m["deletionGracePeriodSeconds"];
  delete m["managedFields"];
  if (!def.namespaced) delete m["namespace"];
  switch (def.resource) {
    case "nodes": {
      // TaintNodesByCondition admission: every new Node starts not-ready until the node lifecycle controller says otherwise.
      const spec = sub(o, "spec");
      const taints = Array.isArray(spec["taints"]) ? (spec["taints"] as unknown[]) : [];
      if (!taints.some((t) => isObj(t) && t["key"] === NOT_READY_TAINT && t["effect"] === "NoSchedule"))
        taints.push({ key: NOT_READY_TAINT, effect: "NoSchedule" });
      spec["taints"] = taints;
      o["spec"] = spec;
      break;
    }
    case "pods":
      m["generation"] = 1;
      o["status"] = { phase: "Pending", qosClass: podQos(o) };
      break;
    case "secrets":
      foldStringData(o);
      break;
    case "namespaces":
      m["labels"] = { ...(isObj(m["labels"]) ? (m["labels"] as Obj) : {}), "kubernetes.io/metadata.name": m["name"] };
      o["spec"] = { finalizers: ["kubernetes"] };
      o["status"] = { phase: "Active" };
      break;
    case "certificatesigningrequests": {
      o["status"] = {};
      if (ctx.user !== undefined) {
        const spec = sub(o, "spec");
        // PrepareForCreate: user info from the request, never from the body (uid and extra are omitempty)
        spec["username"] = ctx.user.name;
        if (ctx.user.uid !== undefined && ctx.user.uid !== "") spec["uid"] = ctx.user.uid;
        else delete spec["uid"];
        spec["groups"] = [...ctx.user.groups];
        const extra = ctx.user.extra ?? {};
        if (Object.keys(extra).length > 0)
          spec["extra"] = Object.fromEntries(
            Object.keys(extra)
              .sort()
              .map((k) => [k, [...(extra[k] ?? [])]]),
          );
        else delete spec["extra"];
        o["spec"] = spec;
      }
      break;
    }
  }
}

/** Copies what a write to `subresource` may not change from the stored object `old` into `o`. */
export function prepareForUpdate(def: ResourceDef, o: Obj, old: Obj, subresource: string, nowMs: number): void {
  const m = meta(o);
  const om = meta(old);
  for (const k of ["uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation"]) {
    if (om[k] === undefined) delete m[k];
    else m[k] = om[k];
  }
  if (!def.namespaced) delete m["namespace"];
  delete m["managedFields"];
  const keep = (field: string) => {
    if (old[field] === undefined) delete o[field];
    else o[field] = structuredClone(old[field]);
  };
  if (subresource === "") {
    if (def.hasStatus) keep("status");
    if (def.resource === "certificatesigningrequests") keep("spec");
    if (def.resource === "secrets") foldStringData(o);
    if (def.resource === "namespaces") keep("spec");
    return;
  }
  if (subresource === "status") {
    keep("spec");
    if (def.resource === "pods") {
      m["ownerReferences"] = om["ownerReferences"];
      if (m["ownerReferences"] === undefined) delete m["ownerReferences"];
    }
    if (def.resource === "certificatesigningrequests") {
      keepApprovalConditions(o, old);
      populateConditionTimestamps(o, old, nowMs);
    }
    return;
  }
  if (subresource === "approval") {
    populateConditionTimestamps(o, old, nowMs);
    keep("spec");
    const status = sub(o, "status");
    const oldCert = sub(old, "status")["certificate"];
    if (oldCert === undefined) delete status["certificate"];
    else status["certificate"] = oldCert;
    o["status"] = status;
  }
}

const APPROVAL_TYPES = ["Approved", "Denied"];

/** The status subresource of a CSR cannot add or remove Approved/Denied conditions; only `approval` can. */
function keepApprovalConditions(o: Obj, old: Obj): void {
  const status = sub(o, "status");
  const cur = Array.isArray(status["conditions"]) ? (status["conditions"] as unknown[]) : [];
  const prev = Array.isArray(sub(old, "status")["conditions"]) ? (sub(old, "status")["conditions"] as unknown[]) : [];
  const isApproval = (c: unknown) => isObj(c) && APPROVAL_TYPES.includes(String(c["type"]));
  const merged = [...prev.filter(isApproval), ...cur.filter((c) => !isApproval(c))];
  if (merged.length > 0) status["conditions"] = merged;
  else delete status["conditions"];
  o["status"] = status;
}

const conditionsOf = (o: Obj): unknown[] => {
  const c = sub(o, "status")["conditions"];
  return Array.isArray(c) ? c : [];
};
const isSet = (t: unknown): boolean => typeof t === "string" && t !== "";

/**
 * CSR status and approval writes: a condition without lastUpdateTime gets now; one without lastTransitionTime keeps
 * the time of a stored condition with the same type and status, else now.
 */
function populateConditionTimestamps(o: Obj, old: Obj, nowMs: number): void {
  const now = timeNow(nowMs);
  const prev = conditionsOf(old).filter(isObj);
  for (const c of conditionsOf(o)) {
    if (!isObj(c)) continue;
    if (!isSet(c["lastUpdateTime"])) c["lastUpdateTime"] = now;
    if (!isSet(c["lastTransitionTime"])) {
      const same = prev.find((p) => p["type"] === c["type"] && p["status"] === c["status"] && isSet(p["lastTransitionTime"]));
      c["lastTransitionTime"] = same === undefined ? now : same["lastTransitionTime"];
    }
  }
}
