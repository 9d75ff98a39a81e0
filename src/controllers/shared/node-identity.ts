import { enqueueObject, type EventHandler, nodes } from "../../kube/index.ts";
import type { Kube, KubeList, KubeObject, Predicate, Selectors } from "../../kube/index.ts";

// The own Node as every Node-watching controller sees it (node, lease, token, health check, systemd
// unit check, OSC): one identity, one lookup, one informer selector, one predicate, one handler.

const hostnameLabel = "kubernetes.io/hostname";

/** The Node this agent runs on, as known at start-up (`nodeName` undefined: not registered yet). */
export interface NodeIdentity {
  readonly hostName: string;
  readonly nodeName: string | undefined;
}

/** Several Nodes carry this machine's hostname label: which one is ours cannot be told. */
export class DuplicateNodeError extends Error {
  override readonly name = "DuplicateNodeError";
}

/**
 * The own Node, uncached: a GET by name when the name is known, else one LIST by the hostname label
 * (node-name discovery, spec §7.1 step 5). None → undefined (not registered yet); several → error.
 */
export async function findNode(kube: Kube, id: NodeIdentity, signal: AbortSignal): Promise<KubeObject | undefined> {
  if (id.nodeName !== undefined) return kube.get<KubeObject>(nodes, "", id.nodeName, { signal });
  return (await discoverNode(kube, id.hostName, signal)).node;
}

/**
 * Node-name discovery with the LIST it made: the Node informer can start from that LIST (same
 * objects as its own first LIST at that resourceVersion: the label selector when no Node was found,
 * the one found Node by name otherwise).
 */
export async function discoverNode(
  kube: Kube,
  hostNameAsIs: string,
  signal: AbortSignal,
): Promise<{ readonly node: KubeObject | undefined; readonly list: KubeList<KubeObject> }> {
  const hostName = hostNameAsIs.toLowerCase();
  const list = await kube.list<KubeObject>(nodes, "", { labelSelector: `${hostnameLabel}=${hostName}`, signal });
  if (list.items.length > 1) {
    const names = list.items.map((n) => n.metadata.name).join(", ");
    throw new DuplicateNodeError(`found more than one node with label ${hostnameLabel}=${hostName}: ${names}`);
  }
  return { node: list.items[0], list };
}

/**
 * Selectors of the one Node informer every Node-watching controller shares (bootstrap-and-config.md
 * §7.4): by name when the node name is known, else by the hostname label.
 */
export function nodeSelectors(id: NodeIdentity): Selectors {
  return id.nodeName !== undefined && id.nodeName !== ""
    ? { fieldSelector: `metadata.name=${id.nodeName}` }
    : { labelSelector: `${hostnameLabel}=${id.hostName}` };
}

/** Passes only Nodes labelled `kubernetes.io/hostname=<hostName>`, for every event kind (controllers.md §0). */
export function nodePredicate(hostName: string): Predicate<KubeObject> {
  const mine = (o: KubeObject) => o.metadata.labels?.[hostnameLabel] === hostName;
  return { create: mine, update: (_old, n) => mine(n), delete: mine, generic: mine };
}

/** The object's own key for every event; an update enqueues the new object's once (src/kube/handler.ts). */
export const enqueueOwnKey: () => EventHandler<KubeObject> = enqueueObject;
