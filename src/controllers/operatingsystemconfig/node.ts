import { canonicalSemVer } from "../../config/index.ts";
import { nodes } from "../../kube/index.ts";
import type { Kube, KubeObject } from "../../kube/index.ts";
import type { HostFs } from "../../host/index.ts";
import type { Osc } from "../../osc/index.ts";
import type { NodeIdentity } from "./deps.ts";
import { zonePath } from "./deps.ts";

export const hostnameLabel = "kubernetes.io/hostname";
export const checksumAnnotation = "checksum/cloud-config-data";
export const kubernetesVersionLabel = "worker.gardener.cloud/kubernetes-version";
const kubeApiServerManifest = "/etc/kubernetes/manifests/kube-apiserver.yaml";

export class NodeLookupError extends Error {
  override readonly name = "NodeLookupError";
  constructor(message: string) {
    super(message);
  }
}

/** GET by name when known; else list by the hostname label (0 → undefined, >1 → error). */
export async function findNode(kube: Kube, id: NodeIdentity, signal: AbortSignal): Promise<KubeObject | undefined> {
  if (id.nodeName !== undefined) return kube.get<KubeObject>(nodes, "", id.nodeName, { signal });
  const hostName = id.hostName.toLowerCase();
  const list = await kube.list<KubeObject>(nodes, "", { labelSelector: `${hostnameLabel}=${hostName}`, signal });
  if (list.items.length > 1) {
    throw new NodeLookupError(`found more than one node with label ${hostnameLabel}=${hostName}`);
  }
  return list.items[0];
}

/** Step 4: role label (control-plane iff spec.files has the kube-apiserver manifest) and zone label. */
export async function desiredNodeLabels(host: HostFs, osc: Osc): Promise<Record<string, string>> {
  const controlPlane = (osc.spec.files ?? []).some((f) => f.path === kubeApiServerManifest);
  const labels: Record<string, string> = controlPlane ? { "node-role.kubernetes.io/control-plane": "" } : { "node-role.kubernetes.io/worker": "" };
  const zone = await host.readText(zonePath);
  if (zone !== undefined) labels["topology.kubernetes.io/zone"] = zone.trim();
  return labels;
}

export async function patchNodeMetadata(
  kube: Kube,
  node: KubeObject,
  meta: { labels?: Record<string, string>; annotations?: Record<string, string> },
  signal: AbortSignal,
): Promise<KubeObject> {
  return kube.patch<KubeObject>(nodes, "", node.metadata.name ?? "", "merge", { metadata: meta }, { signal });
}

/** `1.33` → `1.33.0`, `v1.31.3` → `1.31.3`; undefined when no version is configured. */
export function kubernetesVersionLabelValue(version: string): string | undefined {
  if (version === "") return undefined;
  return canonicalSemVer(version);
}
