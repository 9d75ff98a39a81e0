import type { NodeAgentConfiguration } from "../config/index.ts";
import type { HostFs } from "../host/index.ts";
import type { Kube, KubeObject } from "../kube/index.ts";
import type { AgentEnv } from "./env.ts";

/** The agent's own client certificate kubeconfig (what `run` uses once bootstrapped). */
const agentKubeconfigPath = "/var/lib/gardener-node-agent/credentials/kubeconfig";
/** An operator command must not hang on an unreachable API server. */
const requestTimeoutMs = 10_000;

class NoNodeCredentialsError extends Error {
  override readonly name = "NoNodeCredentialsError";
}

/**
 * A read-only client with the node's own credentials: $KUBECONFIG, the legacy
 * `clientConnection.kubeconfig`, or credentials/kubeconfig. Unlike `run`, it never bootstraps (no
 * CSR, no file written): without a kubeconfig it fails.
 */
export async function nodeClient(config: NodeAgentConfiguration, host: HostFs, env: Pick<AgentEnv, "kubeconfig">): Promise<Kube> {
  const { loadKubeconfig } = await import("../kube/kubeconfig.ts");
  const { KubeClient, defaultUserAgent } = await import("../kube/client.ts");
  const explicit = env.kubeconfig || config.clientConnection.kubeconfig;
  const path = explicit || agentKubeconfigPath;
  if (explicit === "" && (await host.stat(path)) === undefined) {
    throw new NoNodeCredentialsError(`no kubeconfig at ${path}: the agent has not bootstrapped its credentials yet`);
  }
  const restConfig = await loadKubeconfig(path, {
    resolvePath: (p) => host.resolve(p),
    legacyRestrictions: path === config.clientConnection.kubeconfig,
  });
  return new KubeClient({ config: restConfig, userAgent: defaultUserAgent(), timeoutMs: requestTimeoutMs });
}

/** The OSC Secret and this machine's Node (undefined when not registered) as the API server has them. */
export async function readNodeView(
  kube: Kube,
  secretName: string,
  hostName: string,
  signal: AbortSignal,
): Promise<{ readonly secret: KubeObject | undefined; readonly node: KubeObject | undefined }> {
  const { ifFound } = await import("../kube/errors.ts");
  const { secrets } = await import("../kube/resources.ts");
  const { findNode } = await import("../controllers/shared/index.ts");
  const [secret, node] = await Promise.all([
    ifFound(kube.get<KubeObject>(secrets, "kube-system", secretName, { signal })),
    findNode(kube, { hostName, nodeName: undefined }, signal),
  ]);
  return { secret, node };
}
