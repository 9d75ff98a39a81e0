import type { Clock } from "../clock/index.ts";
import type { HostFs } from "../host/index.ts";
import type { Kube, RestConfig } from "../kube/index.ts";
import type { Logger } from "../log/index.ts";
import { withHttps, writeAgentKubeconfig } from "./kubeconfig.ts";
import { readMachineName } from "./machine-name.ts";
import { bootstrapTokenPath, clusterCaPath, kubeconfigPath, legacyTokenPath } from "./paths.ts";
import { discardPendingKey, requestClientCertificate } from "./request-certificate.ts";

/** Neither a kubeconfig nor a bootstrap token: the agent cannot authenticate (spec §7.2, exact text). */
export class NoCredentialsError extends Error {
  override readonly name = "NoCredentialsError";
  constructor() {
    super(
      `unable to construct REST config (neither kubeconfig file "${legacyTokenPath}" nor bootstrap token file "${bootstrapTokenPath}" exist)`,
    );
  }
}

export interface ObtainKubeconfigDeps {
  /** Client authenticated as the requester (bootstrap token, or the current certificate when rotating). */
  readonly kube: Kube;
  readonly host: HostFs;
  readonly clock: Clock;
  readonly log: Logger;
}

/** Where the written kubeconfig points: the API server and how its CA is referenced. */
export interface ClusterEndpoint {
  readonly server: string;
  readonly caFile?: string;
  readonly caPem?: string;
}

/**
 * CSR → certificate → credentials/kubeconfig (0600) → pending key removed. Shared by first start
 * (bootstrap token) and certificate rotation (current client certificate).
 */
export async function obtainAgentKubeconfig(
  deps: ObtainKubeconfigDeps,
  endpoint: ClusterEndpoint,
  machineName: string,
  signal: AbortSignal,
): Promise<void> {
  const issued = await requestClientCertificate(deps, machineName, signal);
  await writeAgentKubeconfig(deps.host, {
    server: endpoint.server,
    ...(endpoint.caFile === undefined ? {} : { caFile: endpoint.caFile }),
    ...(endpoint.caPem === undefined ? {} : { caPem: endpoint.caPem }),
    certificatePem: issued.certificatePem,
    keyPem: issued.keyPem,
  });
  await discardPendingKey(deps.host);
  deps.log.info("Wrote kubeconfig with client certificate", { path: kubeconfigPath, csrName: issued.csrName });
}

export interface IdentityDeps {
  readonly host: HostFs;
  readonly clock: Clock;
  readonly log: Logger;
  /** Loads a kubeconfig file given as host path. */
  readonly loadKubeconfig: (hostPath: string) => Promise<RestConfig>;
  /** Builds a client for a REST config (the caller applies clientConnection QPS/burst for the bootstrap client). */
  readonly createKube: (config: RestConfig) => Kube;
}

/** The bootstrap CA file is missing: client-go fails the same way when it cannot load a configured CA file. */
export class BootstrapCaError extends Error {
  override readonly name = "BootstrapCaError";
  constructor() {
    super(`unable to load root certificates: CA file ${clusterCaPath} does not exist`);
  }
}

/** The bootstrap identity: token file, CA pinned to cluster-ca.crt (not apiServer.caFile, §7.2). */
export async function bootstrapRestConfig(host: HostFs, server: string): Promise<RestConfig> {
  const caPem = await host.readText(clusterCaPath);
  // Never fall back to the system trust store: the bootstrap token must only go to the shoot's API server.
  if (caPem === undefined) throw new BootstrapCaError();
  return {
    server: withHttps(server).replace(/\/+$/, ""),
    caFile: clusterCaPath,
    caPem,
    credentials: { kind: "tokenFile", path: host.resolve(bootstrapTokenPath) },
  };
}

/**
 * Normal-path identity selection (spec §7.2): credentials/kubeconfig if present; else bootstrap token →
 * CSR → kubeconfig; else NoCredentialsError. The legacy `clientConnection.kubeconfig` path is the
 * caller's (it does not touch credentials/).
 */
export async function selectRestConfig(
  deps: IdentityDeps,
  apiServer: { readonly server: string },
  signal: AbortSignal,
): Promise<RestConfig> {
  if ((await deps.host.stat(kubeconfigPath)) !== undefined) return deps.loadKubeconfig(kubeconfigPath);
  if ((await deps.host.stat(bootstrapTokenPath)) === undefined) throw new NoCredentialsError();

  deps.log.info("No kubeconfig found, requesting a client certificate with the bootstrap token");
  const bootstrap = await bootstrapRestConfig(deps.host, apiServer.server);
  const machineName = await readMachineName(deps.host);
  await obtainAgentKubeconfig(
    { kube: deps.createKube(bootstrap), host: deps.host, clock: deps.clock, log: deps.log },
    { server: bootstrap.server, caFile: clusterCaPath },
    machineName,
    signal,
  );
  return deps.loadKubeconfig(kubeconfigPath);
}
