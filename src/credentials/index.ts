export { NoCredentialsError, obtainAgentKubeconfig, selectRestConfig } from "./identity.ts";
export type { ClusterEndpoint, IdentityDeps } from "./identity.ts";
export { writeAgentKubeconfig } from "./kubeconfig.ts";
export { ensureKubeletBootstrapKubeconfig } from "./kubelet-bootstrap.ts";
export { readMachineName } from "./machine-name.ts";
export * from "./paths.ts";
export { CertificateRequestError } from "./request-certificate.ts";
