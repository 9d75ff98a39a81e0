/**
 * Authorization: system:masters may do anything; bootstrappers get the RBAC of system:node-bootstrapper;
 * node agents go through the node-agent authorizer of gardener-resource-manager (bootstrap-and-config.md §11.3).
 */
import type { UserInfo } from "./user.ts";
import type { SimStore } from "./store.ts";
import type { FieldRequirement } from "./selectors.ts";
import { isObj } from "./merge-patch.ts";

export interface RequestAttributes {
  readonly user: UserInfo;
  readonly verb: string;
  readonly isResourceRequest: boolean;
  readonly path: string;
  readonly apiGroup: string;
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
  /** For list/watch: the name pinned by `fieldSelector=metadata.name=<x>`. */
  readonly name: string;
  readonly fieldSelector: readonly FieldRequirement[];
  /** For list/watch: the raw `labelSelector` parameter ("" when absent). */
  readonly labelSelector?: string;
}

export type Decision = { allowed: true } | { allowed: false; reason: string };

export interface AuthzConfig {
  readonly store: SimStore;
  /** machine name → node name ("own node"). */
  readonly machineNodes: ReadonlyMap<string, string>;
  /** machine name → secret names granted besides the fixed ones. */
  readonly machineSecrets: ReadonlyMap<string, ReadonlySet<string>>;
  /** Machines of self-hosted shoots (gardenadm mode): no Machine object, the own Node is named like the machine. */
  readonly selfHostedMachines?: ReadonlySet<string>;
}

const ALLOW: Decision = { allowed: true };
const deny = (reason = ""): Decision => ({ allowed: false, reason });

const NODE_AGENT_PREFIX = "gardener.cloud:node-agent:machine:";
const FIXED_SECRETS = [
  "gardener-valitail",
  "gardener-opentelemetry-collector",
  "shoot-access-kube-controller-manager",
  "shoot-access-kube-scheduler",
  "shoot-access-cluster-admin",
];
const SECRET_NAME_LABEL = "worker.gardener.cloud/gardener-node-agent-secret-name";
const PUBLIC_PATHS = ["/healthz", "/livez", "/readyz", "/version"];

const fmtList = (xs: readonly string[]): string => `[${xs.join(" ")}]`;

function checkVerb(a: RequestAttributes, verbs: string[]): Decision | undefined {
  return verbs.includes(a.verb) ? undefined : deny(`only the following verbs are allowed for this resource type: ${fmtList(verbs)}`);
}
function checkSub(a: RequestAttributes, subs: string[] = []): Decision | undefined {
  return a.subresource === "" || subs.includes(a.subresource)
    ? undefined
    : deny(`only the following subresources are allowed for this resource type: ${fmtList(subs)}`);
}

function ownNode(cfg: AuthzConfig, machine: string): { node: string; labels: Record<string, unknown> } | Decision {
  const node = cfg.machineNodes.get(machine);
  const obj = node === undefined ? undefined : cfg.store.peek("nodes", "", node);
  if (node === undefined || obj === undefined) return deny(`no node for "${machine}" found`);
  const m = obj["metadata"];
  const labels = isObj(m) && isObj(m["labels"]) ? m["labels"] : {};
  return { node, labels };
}

function nodeAgent(a: RequestAttributes, machine: string, cfg: AuthzConfig): Decision {
  if (!a.isResourceRequest) return PUBLIC_PATHS.includes(a.path) || a.path === "/api" || a.path === "/apis" ? ALLOW : deny();
  const gr = `${a.resource}.${a.apiGroup}`;
  switch (gr) {
    case "certificatesigningrequests.certificates.k8s.io": {
      const d = checkSub(a) ?? checkVerb(a, ["get", "create"]);
      if (d !== undefined) return d;
      if (a.verb === "create") return ALLOW;
      const csr = cfg.store.get("certificatesigningrequests", "", a.name);
      if (csr === undefined) return deny(`certificatesigningrequests.certificates.k8s.io "${a.name}" not found`);
      const username = isObj(csr["spec"]) ? csr["spec"]["username"] : undefined;
      return username === a.user.name
        ? ALLOW
        : deny(`gardener-node-agent is only allowed to read or request CSRs for its own user "${a.user.name}"`);
    }
    case "events.":
    case "events.events.k8s.io":
      return checkSub(a) ?? checkVerb(a, ["create", "patch"]) ?? ALLOW;
    case "leases.coordination.k8s.io": {
      const d = checkSub(a) ?? checkVerb(a, ["get", "list", "watch", "create", "update"]);
      if (d !== undefined) return d;
      const own = ownNode(cfg, machine);
      if ("allowed" in own) return own;
      const allowed = [`gardener-node-agent-${own.node}`];
      const extra = own.labels[SECRET_NAME_LABEL];
      if (typeof extra === "string" && extra !== "") allowed.push(extra);
      if ((a.verb !== "create" && !allowed.includes(a.name)) || a.namespace !== "kube-system")
        return deny(`this gardener-node-agent can only access lease "gardener-node-agent-${own.node}" in "kube-system" namespace`);
      return ALLOW;
    }
    case "nodes.": {
      const d = checkSub(a, ["status"]) ?? checkVerb(a, ["get", "list", "watch", "patch", "update"]);
      if (d !== undefined) return d;
      if (a.verb === "list" || a.verb === "watch") return ALLOW;
      const own = ownNode(cfg, machine);
      if ("allowed" in own) return own;
      return a.name === own.node ? ALLOW : deny(`this gardener-node-agent can only access node "${own.node}"`);
    }
    case "pods.": {
      const d = checkSub(a) ?? checkVerb(a, ["get", "list", "watch", "delete"]);
      if (d !== undefined) return d;
      const own = ownNode(cfg, machine);
      if ("allowed" in own) return own;
      if (a.verb === "list" || a.verb === "watch") {
        if (a.fieldSelector.some((r) => r.field === "spec.nodeName" && r.op === "=" && r.value === own.node)) return ALLOW;
        if (a.name === "") return deny(`can only list/watch pods with spec.nodeName=${own.node} field selector`);
      }
      const pod = cfg.store.get("pods", a.namespace, a.name);
      if (pod === undefined) return deny(`error getting pod "${a.namespace}/${a.name}": pods "${a.name}" not found`);
      const nodeName = isObj(pod["spec"]) ? pod["spec"]["nodeName"] : undefined;
      return nodeName === own.node ? ALLOW : deny(`pod "${a.namespace}/${a.name}" does not belong to node "${own.node}"`);
    }
    case "secrets.": {
      const d = checkSub(a) ?? checkVerb(a, ["get", "list", "watch"]);
      if (d !== undefined) return d;
      if (cfg.selfHostedMachines?.has(machine) === true) return gardenadmSecrets(a, machine, cfg);
      const valid = [...FIXED_SECRETS, ...(cfg.machineSecrets.get(machine) ?? [])];
      if (!valid.includes(a.name) || a.namespace !== "kube-system")
        return deny(`gardener-node-agent can only access secrets ${fmtList(valid)} in "kube-system" namespace`);
      return ALLOW;
    }
  }
  return deny();
}

const POOL_LABEL = "worker.gardener.cloud/pool";

const labelsOf = (o: Record<string, unknown> | undefined): Record<string, unknown> => {
  const m = o?.["metadata"];
  return isObj(m) && isObj(m["labels"]) ? m["labels"] : {};
};

/** Names of the Secrets an OSC Secret's osc.yaml refers to through `secretRef` (files of any host). */
function secretRefsOf(secret: Record<string, unknown>): string[] {
  const data = secret["data"];
  const raw = isObj(data) && typeof data["osc.yaml"] === "string" ? Buffer.from(data["osc.yaml"], "base64").toString("utf8") : "";
  return [...raw.matchAll(/secretRef:\s*\{?\s*(?:dataKey:\s*\S+\s*,?\s*)?name:\s*"?([a-z0-9.-]+)/g)].map((m) => m[1] ?? "");
}

/**
 * gardenadm mode of the node-agent authorizer (bootstrap-and-config.md §11.3): before the Node named
 * like the machine exists, every Secret labelled `worker.gardener.cloud/pool` and their secretRefs;
 * afterwards only the Secret named by the Node's secret-name label (and its secretRefs).
 */
function gardenadmSecrets(a: RequestAttributes, machine: string, cfg: AuthzConfig): Decision {
  if (a.namespace !== "kube-system") return deny(`gardener-node-agent can only access secrets in "kube-system" namespace`);
  if (FIXED_SECRETS.includes(a.name)) return ALLOW;
  const node = cfg.store.get("nodes", "", machine);
  const osc = cfg.store.list("secrets").filter((s) => {
    const meta = s["metadata"];
    if (!isObj(meta) || meta["namespace"] !== "kube-system") return false;
    if (node === undefined) return POOL_LABEL in labelsOf(s);
    return meta["name"] === labelsOf(node)[SECRET_NAME_LABEL];
  });
  const allowed = new Set<string>();
  for (const s of osc) {
    const meta = s["metadata"];
    if (isObj(meta) && typeof meta["name"] === "string") allowed.add(meta["name"]);
    for (const ref of secretRefsOf(s)) allowed.add(ref);
  }
  if (a.name !== "" && allowed.has(a.name)) return ALLOW;
  const poolSelector = (a.labelSelector ?? "").split(",").some((r) => r.trim() === POOL_LABEL || r.trim().startsWith(`${POOL_LABEL}=`));
  if (node === undefined && a.name === "" && (a.verb === "list" || a.verb === "watch") && poolSelector) return ALLOW;
  return deny(
    node === undefined
      ? `gardener-node-agent can only access secrets labelled "${POOL_LABEL}" and their secret references before its node exists`
      : `gardener-node-agent can only access the secret named by label "${SECRET_NAME_LABEL}" of node "${machine}"`,
  );
}

function bootstrapper(a: RequestAttributes): Decision {
  if (!a.isResourceRequest) return PUBLIC_PATHS.includes(a.path) || a.path === "/api" || a.path === "/apis" ? ALLOW : deny();
  if (a.apiGroup === "certificates.k8s.io" && a.resource === "certificatesigningrequests" && a.subresource === "")
    return ["create", "get", "list", "watch"].includes(a.verb) ? ALLOW : deny();
  if (
    a.apiGroup === "" &&
    a.resource === "configmaps" &&
    a.verb === "get" &&
    a.namespace === "kube-system" &&
    a.name === "registry-ca-bundle"
  )
    return ALLOW;
  return deny();
}

export function authorize(a: RequestAttributes, cfg: AuthzConfig): Decision {
  const groups = a.user.groups;
  if (groups.includes("system:masters")) return ALLOW;
  if (groups.includes("gardener.cloud:node-agents")) {
    if (!a.user.name.startsWith(NODE_AGENT_PREFIX)) return deny();
    return nodeAgent(a, a.user.name.slice(NODE_AGENT_PREFIX.length), cfg);
  }
  if (groups.includes("system:bootstrappers")) return bootstrapper(a);
  // system:public-info-viewer grants these to everybody, authenticated or not
  if (!a.isResourceRequest && PUBLIC_PATHS.includes(a.path)) return ALLOW;
  if (!a.isResourceRequest && groups.includes("system:authenticated") && (a.path === "/api" || a.path === "/apis")) return ALLOW;
  return deny();
}

/** The message kube-apiserver builds for a denied request (responsewriters.forbiddenMessage). */
export function forbiddenMessage(a: RequestAttributes, reason: string): string {
  let msg: string;
  if (!a.isResourceRequest) msg = `User "${a.user.name}" cannot ${a.verb} path "${a.path}"`;
  else {
    const res = a.subresource === "" ? a.resource : `${a.resource}/${a.subresource}`;
    msg =
      a.namespace !== ""
        ? `User "${a.user.name}" cannot ${a.verb} resource "${res}" in API group "${a.apiGroup}" in the namespace "${a.namespace}"`
        : `User "${a.user.name}" cannot ${a.verb} resource "${res}" in API group "${a.apiGroup}" at the cluster scope`;
  }
  return reason === "" ? msg : `${msg}: ${reason}`;
}
