/** Kubeconfig text for a client of the simulator. */
import { stringify } from "yaml";

export type KubeconfigAuth = { token: string } | { tokenFile: string } | { clientCert: { certPem: string; keyPem: string } };

export interface KubeconfigOptions {
  /** Server URL to write (default: the simulator's own URL), e.g. https://10.0.2.100:6443 for a VM. */
  server?: string;
  /** Write `certificate-authority: <path>` instead of inline data. */
  caPath?: string;
  /** Names of cluster, user and context (default "sim"). */
  name?: string;
}

const b64 = (s: string): string => Buffer.from(s).toString("base64");

export function renderKubeconfig(server: string, caPem: string, auth: KubeconfigAuth, opts: KubeconfigOptions = {}): string {
  const name = opts.name ?? "sim";
  const cluster: Record<string, string> = { server: opts.server ?? server };
  if (opts.caPath !== undefined) cluster["certificate-authority"] = opts.caPath;
  else cluster["certificate-authority-data"] = b64(caPem);
  const user: Record<string, string> = {};
  if ("token" in auth) user["token"] = auth.token;
  else if ("tokenFile" in auth) user["tokenFile"] = auth.tokenFile;
  else {
    user["client-certificate-data"] = b64(auth.clientCert.certPem);
    user["client-key-data"] = b64(auth.clientCert.keyPem);
  }
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name, cluster }],
    users: [{ name, user }],
    contexts: [{ name, context: { cluster: name, user: name } }],
    "current-context": name,
  });
}
