import type { HostFs } from "../../../host/index.ts";
import type { KubeObject, Predicate, Selectors } from "../../../kube/index.ts";

/**
 * gardenadm mode (self-hosted shoots; osc-controller.md 9.4, bootstrap-and-config.md §3.4, §11.3).
 * A machine is self-hosted when gardenadm's provision OSC put its directory on it
 * (`/var/lib/gardenadm/download.sh`, §3.4); nothing else on a node creates that directory.
 */
const gardenadmDir = "/var/lib/gardenadm";
const poolLabel = "worker.gardener.cloud/pool";

export async function isSelfHostedMachine(host: Pick<HostFs, "stat">): Promise<boolean> {
  return (await host.stat(gardenadmDir))?.kind === "dir";
}

/**
 * What the OSC Secret cache lists and watches (§7.4, §11.3): by name — except on a self-hosted
 * machine whose Node does not exist yet, where the authorizer grants no name lookup through a Node
 * label and the agent watches every pool's OSC Secret instead (label `worker.gardener.cloud/pool`).
 */
export function oscSecretSelectors(o: {
  readonly secretName: string;
  readonly selfHosted: boolean;
  readonly nodeKnown: boolean;
}): Selectors {
  return o.selfHosted && !o.nodeKnown ? { labelSelector: poolLabel } : { fieldSelector: `metadata.name=${o.secretName}` };
}

/** Only the configured OSC Secret reaches the queue, whatever else the cache holds. */
export function namedSecretPredicate(secretName: string): Predicate<KubeObject> {
  const mine = (o: KubeObject) => o.metadata.name === secretName;
  return { create: mine, update: (_old, n) => mine(n), delete: mine, generic: mine };
}
