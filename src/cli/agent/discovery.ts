import { nodes } from "../../kube/resources.ts";
import type { Kube, KubeObject } from "../../kube/types.ts";

export const hostnameLabel = "kubernetes.io/hostname";

export class DuplicateNodeError extends Error {
  override readonly name = "DuplicateNodeError";
}

/**
 * Node-name discovery at start-up (spec §7.1 step 5): one uncached LIST by the hostname label.
 * No Node → undefined (not registered yet); several → fatal.
 */
export async function discoverNodeName(kube: Kube, hostName: string, signal: AbortSignal): Promise<string | undefined> {
  const list = await kube.list<KubeObject>(nodes, "", { labelSelector: `${hostnameLabel}=${hostName}`, signal });
  if (list.items.length > 1) {
    const names = list.items.map((n) => n.metadata.name).join(", ");
    throw new DuplicateNodeError(`found more than one node with label ${hostnameLabel}=${hostName}: ${names}`);
  }
  return list.items[0]?.metadata.name;
}

/** The Node informer's selector: by name once known, else by the hostname label (§7.4). */
export const nodeSelector = (hostName: string, nodeName: string | undefined) =>
  nodeName === undefined ? { labelSelector: `${hostnameLabel}=${hostName}` } : { fieldSelector: `metadata.name=${nodeName}` };
