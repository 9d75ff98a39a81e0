import type { HostFs } from "../host/index.ts";
import { renderKubeletBootstrapKubeconfig } from "./kubeconfig.ts";
import {
  bootstrapTokenPath,
  kubeletBootstrapKubeconfigPath,
  kubeletClientCertPath,
  kubeletDir,
  kubeletRealKubeconfigPath,
} from "./paths.ts";

export type KubeletBootstrapOutcome = "written" | "no-bootstrap-token" | "kubelet-already-bootstrapped";

/**
 * Bootstrap runnable of spec §7.6: gives kubelet a TLS-bootstrap kubeconfig built from the bootstrap
 * token, unless there is no token or kubelet already has its own credentials. I/O errors other than
 * "not found" propagate (fatal for the caller).
 */
export async function ensureKubeletBootstrapKubeconfig(
  host: HostFs,
  apiServer: { readonly server: string; readonly caFile: string },
): Promise<KubeletBootstrapOutcome> {
  const token = await host.readText(bootstrapTokenPath);
  if (token === undefined) return "no-bootstrap-token";
  if ((await host.stat(kubeletRealKubeconfigPath)) !== undefined) return "kubelet-already-bootstrapped";
  if ((await host.stat(kubeletClientCertPath)) !== undefined) return "kubelet-already-bootstrapped";
  await host.ensureDir(kubeletDir);
  await host.writeFileAtomic(
    kubeletBootstrapKubeconfigPath,
    renderKubeletBootstrapKubeconfig({ server: apiServer.server, caFile: apiServer.caFile, token: token.trim() }),
    0o600,
  );
  return "written";
}

/**
 * Removes the bootstrap credentials once the Node exists and the OSC is applied (called by the OSC
 * controller): kubelet's bootstrap kubeconfig and the bootstrap token. Missing files are fine.
 */
export async function removeBootstrapCredentials(host: HostFs): Promise<void> {
  await host.remove(kubeletBootstrapKubeconfigPath);
  await host.remove(bootstrapTokenPath);
}
