import type { KubeObject } from "../../kube/index.ts";
import { stateDir } from "../shared/index.ts";

// Paths, unit names and annotations the stages and features share: values only, no types of the room.
export { changesPath, stateDir } from "../shared/index.ts";
export const zonePath = `${stateDir}/zone`;
export const bootstrapTokenPath = `${stateDir}/credentials/bootstrap-token`;
export const kubeletBootstrapKubeconfigPath = "/var/lib/kubelet/kubeconfig-bootstrap";
export const unitDir = "/etc/systemd/system";
export const agentUnitName = "gardener-node-agent.service";
export const agentBinaryPath = "/opt/bin/gardener-node-agent";
export const containerdUnitName = "containerd.service";

/** The Node annotation holding the checksum of the OSC it runs. */
export const checksumAnnotation = "checksum/cloud-config-data";
export const kubernetesVersionLabel = "worker.gardener.cloud/kubernetes-version";

const serialAnnotation = "reconciliation.osc.node-agent.gardener.cloud/serial";
/** 9.2: the Secret asks for one node at a time. */
export const isSerial = (secret: KubeObject): boolean => secret.metadata.annotations?.[serialAnnotation] === "true";
