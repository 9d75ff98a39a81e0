/**
 * What Go's encoding/json adds when kube-apiserver writes an object: struct fields are never omitted (even with
 * `omitempty`), zero metav1.Time/MicroTime become `null`, and strings without `omitempty` become "". So a Node
 * always carries `spec` and `status.daemonEndpoints`/`status.nodeInfo`, a core Event `involvedObject: {}`, `source: {}`
 * and null timestamps, a Lease `spec: {}`. Applied to every stored object (stored form) and to bookmark objects.
 */
import { isObj } from "./merge-patch.ts";

type Obj = Record<string, unknown>;

/** Top-level fields in the order the Go structs serialise them (after kind, apiVersion, metadata). */
const TOP_ORDER: Record<string, readonly string[]> = {
  nodes: ["spec", "status"],
  pods: ["spec", "status"],
  namespaces: ["spec", "status"],
  leases: ["spec"],
  certificatesigningrequests: ["spec", "status"],
  events: [
    "involvedObject",
    "reason",
    "message",
    "source",
    "firstTimestamp",
    "lastTimestamp",
    "count",
    "type",
    "eventTime",
    "series",
    "action",
    "related",
    "reportingComponent",
    "reportingInstance",
  ],
};

/** NodeStatus fields in serialisation order; also the pruning schema's list of them (schema.ts). */
export const NODE_STATUS_ORDER = [
  "capacity",
  "allocatable",
  "phase",
  "conditions",
  "addresses",
  "daemonEndpoints",
  "nodeInfo",
  "images",
  "volumesInUse",
  "volumesAttached",
  "config",
  "runtimeHandlers",
  "features",
];

/** NodeSystemInfo: ten strings without omitempty (swap is a pointer). */
const NODE_INFO_ORDER = [
  "machineID",
  "systemUUID",
  "bootID",
  "kernelVersion",
  "osImage",
  "containerRuntimeVersion",
  "kubeletVersion",
  "kubeProxyVersion",
  "operatingSystem",
  "architecture",
  "swap",
];
export const NODE_CONDITION_ORDER = ["type", "status", "lastHeartbeatTime", "lastTransitionTime", "reason", "message"];

/** `o` with `order` first (present keys only), then every other key in its original order. */
function ordered(o: Obj, order: readonly string[]): Obj {
  const out: Obj = {};
  for (const k of order) if (Object.hasOwn(o, k)) out[k] = o[k];
  for (const [k, v] of Object.entries(o)) if (!Object.hasOwn(out, k)) out[k] = v;
  return out;
}

/** The object at `o[k]` (created when missing or null). */
function struct(o: Obj, k: string): Obj {
  if (!isObj(o[k])) o[k] = {};
  return o[k] as Obj;
}

function setMissing(o: Obj, k: string, zero: unknown): void {
  if (o[k] === undefined) o[k] = zero;
}

function nodeDefaults(o: Obj): void {
  struct(o, "spec");
  const status = struct(o, "status");
  const kubelet = struct(struct(status, "daemonEndpoints"), "kubeletEndpoint");
  setMissing(kubelet, "Port", 0);
  const info = struct(status, "nodeInfo");
  for (const k of NODE_INFO_ORDER.slice(0, 10)) setMissing(info, k, "");
  status["nodeInfo"] = ordered(info, NODE_INFO_ORDER);
  if (Array.isArray(status["conditions"]))
    status["conditions"] = status["conditions"].map((c) => {
      if (!isObj(c)) return c;
      for (const k of ["type", "status"]) setMissing(c, k, "");
      for (const k of ["lastHeartbeatTime", "lastTransitionTime"]) setMissing(c, k, null);
      return ordered(c, NODE_CONDITION_ORDER);
    });
  if (Array.isArray(status["addresses"]))
    for (const a of status["addresses"]) if (isObj(a)) for (const k of ["type", "address"]) setMissing(a, k, "");
  o["status"] = ordered(status, NODE_STATUS_ORDER);
}

function eventDefaults(o: Obj): void {
  struct(o, "involvedObject");
  struct(o, "source");
  for (const k of ["firstTimestamp", "lastTimestamp", "eventTime"]) setMissing(o, k, null);
  for (const k of ["reportingComponent", "reportingInstance"]) setMissing(o, k, "");
}

/** Adds the zero values Go serialises to `o` (stored form of `resource`) and returns it with Go's field order. */
export function withWireDefaults(resource: string, o: Obj): Obj {
  switch (resource) {
    case "nodes":
      nodeDefaults(o);
      break;
    case "pods":
      setMissing(struct(o, "spec"), "containers", null);
      struct(o, "status");
      break;
    case "namespaces":
      struct(o, "spec");
      struct(o, "status");
      break;
    case "leases":
      struct(o, "spec");
      break;
    case "certificatesigningrequests": {
      const spec = struct(o, "spec");
      setMissing(spec, "request", null);
      setMissing(spec, "signerName", "");
      struct(o, "status");
      break;
    }
    case "events":
      eventDefaults(o);
      break;
    default:
      return o;
  }
  return ordered(o, ["kind", "apiVersion", "metadata", ...(TOP_ORDER[resource] ?? [])]);
}
