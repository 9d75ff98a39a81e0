import { yamlPackage } from "../../../../config/index.ts";
import type { KubeObject } from "../../../../kube/index.ts";
import type { StepContext } from "../../apply/context.ts";
import { kubeletBootstrapKubeconfigPath } from "../../constants.ts";
import type { InPlaceDeps } from "./deps.ts";
import { restartKubelet } from "./kubelet.ts";

const kubeletRealKubeconfigPath = "/var/lib/kubelet/kubeconfig-real";
const kubeletPkiDir = "/var/lib/kubelet/pki";
const kubeletClientCertPath = `${kubeletPkiDir}/kubelet-client-current.pem`;

export class CredentialsRotationError extends Error {
  override readonly name = "CredentialsRotationError";
}

const toYaml = (doc: unknown): string => yamlPackage().stringify(doc, { indentSeq: false, sortMapEntries: true, lineWidth: 0 });
const b64 = (b: Uint8Array): string => Buffer.from(b).toString("base64");

/**
 * §9.3 step 5: kubelet's current kubeconfig with the cluster replaced by the configured API server and
 * CA file (the new CA bundle) and the user by kubelet's current client certificate+key (the PEM holds
 * both). kubelet then re-bootstraps against the new CA with the credentials it has.
 */
export function renderRotationBootstrapKubeconfig(
  realKubeconfig: string,
  clientPem: Uint8Array,
  apiServer: InPlaceDeps["apiServer"],
): string {
  let doc: Record<string, unknown>;
  try {
    const parsed: unknown = Bun.YAML.parse(realKubeconfig);
    doc = parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? { ...(parsed as Record<string, unknown>) } : {};
  } catch {
    // Not kept as cause: the parser's message quotes the offending line (errorText would repeat it).
    throw new CredentialsRotationError(`failed decoding ${kubeletRealKubeconfigPath}`);
  }
  doc["clusters"] = [{ name: "default-cluster", cluster: { "certificate-authority": apiServer.caFile, server: apiServer.server } }];
  doc["users"] = [{ name: "default-auth", user: { "client-certificate-data": b64(clientPem), "client-key-data": b64(clientPem) } }];
  return toYaml(doc);
}

/** CA rotation, kubelet part: rebuild the bootstrap kubeconfig, drop the old credentials, restart kubelet. */
async function rotateKubeletCa(ctx: StepContext, inPlace: InPlaceDeps, node: KubeObject): Promise<void> {
  const { host, log } = ctx.ports;
  const real = await host.readText(kubeletRealKubeconfigPath);
  if (real !== undefined) {
    const pem = await host.readFile(kubeletClientCertPath);
    if (pem === undefined) throw new CredentialsRotationError(`${kubeletClientCertPath} does not exist`);
    await host.writeFileAtomic(kubeletBootstrapKubeconfigPath, renderRotationBootstrapKubeconfig(real, pem, inPlace.apiServer), 0o600);
  }
  // A resumed run finds kubeconfig-real already gone and the bootstrap kubeconfig from the first try.
  if ((await host.stat(kubeletBootstrapKubeconfigPath)) === undefined) {
    throw new CredentialsRotationError(`${kubeletBootstrapKubeconfigPath} does not exist after preparing the kubelet for the CA rotation`);
  }
  await host.remove(kubeletRealKubeconfigPath);
  await host.removeAll(kubeletPkiDir);
  log.info("Restarting kubelet to request a client certificate signed by the new CA");
  await restartKubelet(ctx, inPlace, node);
  await ctx.store.update((c) => {
    c.inPlaceUpdates.certificateAuthoritiesRotation.kubelet = false;
  });
}

/** §9.3 steps 3–5 (SA key: resync tokens; CA: new agent and kubelet credentials); each part clears its flag when done. */
export async function rotateCredentials(ctx: StepContext, inPlace: InPlaceDeps, node: KubeObject): Promise<void> {
  const { log, config, onTokenResync } = ctx.ports;
  const flags = ctx.store.changes.inPlaceUpdates;
  if (flags.serviceAccountKeyRotation) {
    log.info("Service account key rotated, resyncing every token");
    for (const s of config.tokenSyncConfigs) onTokenResync({ namespace: "kube-system", name: s.secretName });
    await ctx.store.update((c) => {
      c.inPlaceUpdates.serviceAccountKeyRotation = false;
    });
  }
  if (flags.certificateAuthoritiesRotation.nodeAgent) {
    log.info("Certificate authorities rotated, requesting a new client certificate for the agent");
    await inPlace.renewAgentCredentials(ctx.signal);
    await ctx.store.update((c) => {
      c.inPlaceUpdates.certificateAuthoritiesRotation.nodeAgent = false;
      c.mustRestartNodeAgent = true;
    });
  }
  if (flags.certificateAuthoritiesRotation.kubelet) {
    log.info("Certificate authorities rotated, re-bootstrapping kubelet");
    await rotateKubeletCa(ctx, inPlace, node);
  }
}
