import { enqueueObject, type EventHandler } from "../../kube/index.ts";
import type { KubeObject, Predicate, Selectors } from "../../kube/index.ts";

// The own Node as every Node-watching controller sees it (node, lease, token, health check, systemd
// unit check): one identity, one informer selector, one predicate, one handler.

export const hostnameLabel = "kubernetes.io/hostname";

/** The Node this agent runs on, as known at start-up (`nodeName` undefined: not registered yet). */
export interface NodeIdentity {
  readonly hostName: string;
  readonly nodeName: string | undefined;
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
