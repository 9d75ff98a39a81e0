import { yamlPackage } from "../config/index.ts";
import type { HostFs } from "../host/index.ts";
import { kubeconfigPath } from "./paths.ts";

/** `https://` is prepended when the server does not start with it (upstream rule for written kubeconfigs). */
export const withHttps = (server: string): string => (server.startsWith("https://") ? server : `https://${server}`);

/** Kubeconfig YAML like clientcmd writes it: sorted keys, sequences not indented, no line folding. */
const toYaml = (doc: unknown): string => yamlPackage().stringify(doc, { indentSeq: false, sortMapEntries: true, lineWidth: 0 });

export interface AgentKubeconfigInput {
  readonly server: string;
  /** CA file path; referenced by path whenever the REST config used a file. */
  readonly caFile?: string;
  /** CA bundle PEM, used only when there is no CA file. */
  readonly caPem?: string;
  readonly certificatePem: string;
  readonly keyPem: string;
}

/** credentials/kubeconfig: cluster, user and context all named `node-agent` (spec §7.3). */
function renderAgentKubeconfig(input: AgentKubeconfigInput): string {
  const cluster: Record<string, string> = { server: withHttps(input.server) };
  if (input.caFile !== undefined && input.caFile !== "") cluster["certificate-authority"] = input.caFile;
  else if (input.caPem !== undefined) cluster["certificate-authority-data"] = Buffer.from(input.caPem).toString("base64");
  return toYaml({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "node-agent", cluster }],
    users: [
      {
        name: "node-agent",
        user: {
          "client-certificate-data": Buffer.from(input.certificatePem).toString("base64"),
          "client-key-data": Buffer.from(input.keyPem).toString("base64"),
        },
      },
    ],
    contexts: [{ name: "node-agent", context: { cluster: "node-agent", user: "node-agent" } }],
    "current-context": "node-agent",
  });
}

/** Writes credentials/kubeconfig with mode 0600, creating credentials/ when missing. */
export async function writeAgentKubeconfig(host: HostFs, input: AgentKubeconfigInput): Promise<void> {
  await host.ensureDir(kubeconfigPath.slice(0, kubeconfigPath.lastIndexOf("/")), 0o700);
  await host.writeFileAtomic(kubeconfigPath, renderAgentKubeconfig(input), 0o600);
}

export interface KubeletBootstrapInput {
  readonly server: string;
  readonly caFile: string;
  readonly token: string;
}

/** /var/lib/kubelet/kubeconfig-bootstrap, names `kubelet-bootstrap` (spec §7.6). */
export function renderKubeletBootstrapKubeconfig(input: KubeletBootstrapInput): string {
  return toYaml({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "kubelet-bootstrap", cluster: { "certificate-authority": input.caFile, server: withHttps(input.server) } }],
    contexts: [{ name: "kubelet-bootstrap", context: { cluster: "kubelet-bootstrap", user: "kubelet-bootstrap" } }],
    "current-context": "kubelet-bootstrap",
    users: [{ name: "kubelet-bootstrap", user: { token: input.token } }],
  });
}
