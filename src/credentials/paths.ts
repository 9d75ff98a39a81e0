/** Host paths of the agent's credentials (spec bootstrap-and-config.md §2). */
const baseDir = "/var/lib/gardener-node-agent";
const credentialsDir = `${baseDir}/credentials`;
export const kubeconfigPath = `${credentialsDir}/kubeconfig`;
export const bootstrapTokenPath = `${credentialsDir}/bootstrap-token`;
/** Legacy constant; only named in the "no credentials" error (upstream quirk, §7.2). */
export const legacyTokenPath = `${credentialsDir}/token`;
/** Private key of the CSR in flight, kept so a restarted agent reuses its pending CSR (our addition). */
export const pendingKeyPath = `${credentialsDir}/bootstrap-csr.key`;
export const machineNamePath = `${baseDir}/machine-name`;
/** The bootstrap REST config pins this CA file, not apiServer.caFile (§7.2). */
export const clusterCaPath = `${baseDir}/cluster-ca.crt`;
export const kubeletDir = "/var/lib/kubelet";
export const kubeletBootstrapKubeconfigPath = `${kubeletDir}/kubeconfig-bootstrap`;
export const kubeletRealKubeconfigPath = `${kubeletDir}/kubeconfig-real`;
export const kubeletClientCertPath = `${kubeletDir}/pki/kubelet-client-current.pem`;
