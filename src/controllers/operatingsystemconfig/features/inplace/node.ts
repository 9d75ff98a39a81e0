import { findCondition, type Kube, type KubeObject, patchNodeMetadata } from "../../../../kube/index.ts";

/** Set by machine-controller-manager once the node is drained for the in-place update. */
const inPlaceConditionType = "InPlaceUpdate";
const readyForUpdateReason = "ReadyForUpdate";
export const updateResultLabel = "node.machine.sapcloud.io/update-result";
export const updateFailedReasonAnnotation = "node.machine.sapcloud.io/update-failed-reason";
export const updatingOsVersionAnnotation = "node-agent.gardener.cloud/updating-operating-system-version";
export const secretNameLabel = "worker.gardener.cloud/gardener-node-agent-secret-name";

/** The Node carries condition InPlaceUpdate with reason ReadyForUpdate (drained by MCM). */
export const readyForUpdate = (node: KubeObject | undefined): boolean =>
  findCondition(node, inPlaceConditionType)?.reason === readyForUpdateReason;

export const updateResult = (node: KubeObject | undefined): string | undefined => node?.metadata.labels?.[updateResultLabel];
export const annotation = (node: KubeObject | undefined, name: string): string | undefined => node?.metadata.annotations?.[name];

/** The failure report machine-controller-manager reads (§8): label failed + reason annotation. */
export const markFailed = (kube: Kube, node: KubeObject, reason: string, signal: AbortSignal): Promise<KubeObject> =>
  patchNodeMetadata(
    kube,
    node,
    { labels: { [updateResultLabel]: "failed" }, annotations: { [updateFailedReasonAnnotation]: reason } },
    signal,
  );

/** The success report (§8): label successful, failure reason and updating-OS annotations removed. */
export const markSuccessful = (kube: Kube, node: KubeObject, signal: AbortSignal): Promise<KubeObject> =>
  patchNodeMetadata(
    kube,
    node,
    {
      labels: { [updateResultLabel]: "successful" },
      annotations: { [updateFailedReasonAnnotation]: null, [updatingOsVersionAnnotation]: null },
    },
    signal,
  );
