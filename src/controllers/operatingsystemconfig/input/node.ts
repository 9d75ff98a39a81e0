import { canonicalSemVer } from "../../../config/index.ts";
import type { HostFs } from "../../../host/index.ts";
import type { Osc } from "../../../osc/index.ts";
import { zonePath } from "../constants.ts";

const kubeApiServerManifest = "/etc/kubernetes/manifests/kube-apiserver.yaml";

/** Whether the OSC makes a control-plane node: spec.files has the kube-apiserver manifest. */
export const isControlPlane = (osc: Osc): boolean => (osc.spec.files ?? []).some((f) => f.path === kubeApiServerManifest);

/** Step 4: role label (control-plane per isControlPlane) and zone label. */
export async function desiredNodeLabels(host: HostFs, controlPlane: boolean): Promise<Record<string, string>> {
  const labels: Record<string, string> = controlPlane
    ? { "node-role.kubernetes.io/control-plane": "" }
    : { "node-role.kubernetes.io/worker": "" };
  const zone = await host.readText(zonePath);
  if (zone !== undefined) labels["topology.kubernetes.io/zone"] = zone.trim();
  return labels;
}

/** `1.33` → `1.33.0`, `v1.31.3` → `1.31.3`; undefined when no version is configured. */
export function kubernetesVersionLabelValue(version: string): string | undefined {
  if (version === "") return undefined;
  return canonicalSemVer(version);
}
