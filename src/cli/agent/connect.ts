import type { Clock } from "../../clock/index.ts";
import type { NodeAgentConfiguration } from "../../config/index.ts";
import { selectRestConfig } from "../../credentials/index.ts";
import type { HostFs } from "../../host/index.ts";
import { KubeClient, loadKubeconfig, type RestConfig } from "../../kube/index.ts";
import type { Kube } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";

export interface Connection {
  readonly kube: Kube;
  readonly restConfig: RestConfig;
  /** Same identity, its own rate limit: a burst of events never delays the controllers' requests. */
  readonly eventsKube: Kube;
}

/**
 * The client the controllers use (spec §7.2): the legacy `clientConnection.kubeconfig` when set
 * (with its QPS/burst), else credentials/kubeconfig (client-go defaults 5/10), obtaining it first
 * through the bootstrap token and a CSR when it does not exist yet.
 */
export async function connect(
  config: NodeAgentConfiguration,
  deps: { readonly host: HostFs; readonly clock: Clock; readonly log: Logger; readonly userAgent: string },
  signal: AbortSignal,
): Promise<Connection> {
  const { host, clock, log, userAgent } = deps;
  const { qps, burst, kubeconfig } = config.clientConnection;
  const load = (hostPath: string) =>
    loadKubeconfig(hostPath, { resolvePath: (p) => host.resolve(p), legacyRestrictions: hostPath === kubeconfig });
  const clientFor = (restConfig: RestConfig, limits?: { qps: number; burst: number }) =>
    new KubeClient({ config: restConfig, clock, userAgent, ...(limits ?? {}) });

  if (kubeconfig !== "") {
    const restConfig = await load(kubeconfig);
    return { kube: clientFor(restConfig, { qps, burst }), restConfig, eventsKube: clientFor(restConfig, { qps, burst }) };
  }
  const restConfig = await selectRestConfig(
    {
      host,
      clock,
      log,
      loadKubeconfig: load,
      // The bootstrap-token client gets clientConnection's limits (§7.2 step 2).
      createKube: (bootstrap) => clientFor(bootstrap, { qps, burst }),
    },
    config.apiServer,
    signal,
  );
  return { kube: clientFor(restConfig), restConfig, eventsKube: clientFor(restConfig) };
}
