export { createCsrPem, p1363ToDer, parseCsrPem, subjectDer } from "./csr.ts";
export type { CsrSubject, ParsedCsr } from "./csr.ts";
export { csrName } from "./csr-name.ts";
export { decodeEcPrivateKeyPem, encodeEcPrivateKeyPem, generateEcKey, publicKeyInfoDer, sec1Der } from "./ec-key.ts";
export type { EcKey } from "./ec-key.ts";
export { BootstrapCaError, bootstrapRestConfig, NoCredentialsError, obtainAgentKubeconfig, selectRestConfig } from "./identity.ts";
export type { ClusterEndpoint, IdentityDeps, ObtainKubeconfigDeps } from "./identity.ts";
export { renderAgentKubeconfig, renderKubeletBootstrapKubeconfig, withHttps, writeAgentKubeconfig } from "./kubeconfig.ts";
export type { AgentKubeconfigInput, KubeletBootstrapInput } from "./kubeconfig.ts";
export { ensureKubeletBootstrapKubeconfig, removeBootstrapCredentials } from "./kubelet-bootstrap.ts";
export type { KubeletBootstrapOutcome } from "./kubelet-bootstrap.ts";
export { MachineNameError, readMachineName } from "./machine-name.ts";
export * from "./paths.ts";
export { decodePem, encodePem, PemError } from "./pem.ts";
export {
  CertificateRequestError,
  commonNamePrefix,
  csrExpirationSeconds,
  csrUsages,
  discardPendingKey,
  organization,
  pollIntervalMs,
  requestClientCertificate,
  signerName,
  waitTimeoutMs,
} from "./request-certificate.ts";
export type { CertificateRequestDeps, CertificateRequestErrorKind, IssuedCertificate } from "./request-certificate.ts";
