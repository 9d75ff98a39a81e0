import { stringify } from "yaml";
import type { Osc, OscFile, Unit } from "../osc/schema.ts";
import { RenderError } from "./errors.ts";

/** Paths and names of the node-init OSC (spec §2, §3). */
export const initScriptPath = "/var/lib/gardener-node-agent/init.sh";
export const clusterCaPath = "/var/lib/gardener-node-agent/cluster-ca.crt";
export const bootstrapTokenPath = "/var/lib/gardener-node-agent/credentials/bootstrap-token";
export const machineNamePath = "/var/lib/gardener-node-agent/machine-name";
export const initUnitName = "gardener-node-init.service";
export const bootstrapTokenPlaceholder = "<<BOOTSTRAP_TOKEN>>";
export const machineNamePlaceholder = "<<MACHINE_NAME>>";
/** Template point of cloud-init/init.sh (its line 2: `IMAGE="${GNA_IMAGE:-__IMAGE__}"`). */
export const initScriptImagePlaceholder = "__IMAGE__";

export interface ProvisionInput {
  /** Shoot API server URL as the node reaches it. */
  readonly server: string;
  /** Cluster CA bundle (PEM). */
  readonly caBundle: string;
  /** Agent image reference (`repo:tag` or `repo@sha256:…`) put into init.sh. */
  readonly image: string;
  /** init.sh template (cloud-init/init.sh). */
  readonly initScript: string;
  /** `controllers.operatingSystemConfig.secretName`. */
  readonly secretName: string;
  readonly kubernetesVersion: string;
  /** The agent's GitVersion: names the config file `config-<version>.yaml`. */
  readonly version: string;
  /** `bootstrap.kubeletDataVolumeSize` in bytes, when the worker has a kubelet data volume. */
  readonly kubeletDataVolumeSize?: number | undefined;
}

/** gardener-node-init.service (spec §3.1, `Requires=` variant), no trailing newline. */
export const initUnitContent = `[Unit]
Description=Downloads the gardener-node-agent binary from the container registry and bootstraps it.
Requires=containerd.service
After=containerd.service
After=network-online.target
Wants=network-online.target
[Service]
Type=oneshot
Restart=on-failure
RestartSec=5
StartLimitBurst=0
EnvironmentFile=/etc/environment
ExecStart=/var/lib/gardener-node-agent/init.sh
StandardOutput=journal+console
StandardError=journal+console
[Install]
WantedBy=multi-user.target`;

/**
 * The init config exactly as gardenlet serialises it (spec §3.2): keys sorted, zero values of
 * non-optional fields present, `bootstrap` always set; the agent fills defaults when decoding.
 */
export function renderInitConfig(input: Pick<ProvisionInput, "server" | "secretName" | "kubernetesVersion" | "kubeletDataVolumeSize">): string {
  const doc = {
    apiServer: { caFile: clusterCaPath, server: input.server },
    apiVersion: "nodeagent.config.gardener.cloud/v1alpha1",
    bootstrap: input.kubeletDataVolumeSize === undefined ? {} : { kubeletDataVolumeSize: input.kubeletDataVolumeSize },
    clientConnection: { acceptContentTypes: "", burst: 0, contentType: "", kubeconfig: "", qps: 0 },
    controllers: {
      operatingSystemConfig: { kubernetesVersion: input.kubernetesVersion, secretName: input.secretName },
      systemdUnitCheck: {},
      token: { syncPeriod: "12h0m0s" },
    },
    kind: "NodeAgentConfiguration",
    logFormat: "",
    logLevel: "",
    server: {},
  };
  return stringify(doc, { sortMapEntries: true, indentSeq: false, lineWidth: 0 });
}

// The image lands inside a double-quoted shell word of init.sh: allow reference characters only.
const imageReference = /^[A-Za-z0-9][A-Za-z0-9._:/@+-]*$/;

/** init.sh with the image filled in at its template point (only the first occurrence, line 2). */
export function renderInitScript(template: string, image: string): string {
  if (!imageReference.test(image)) throw new RenderError("invalid", "image", `invalid image reference "${image}"`);
  if (!template.includes(initScriptImagePlaceholder)) {
    throw new RenderError("invalid", "initScript", `init.sh template has no ${initScriptImagePlaceholder} placeholder`);
  }
  return template.replace(initScriptImagePlaceholder, () => image);
}

const b64 = (s: string): string => Buffer.from(s).toString("base64");
const b64File = (path: string, permissions: number, data: string): OscFile => ({
  path,
  permissions,
  content: { inline: { encoding: "b64", data: b64(data) } },
});
const placeholderFile = (path: string, placeholder: string): OscFile => ({
  path,
  permissions: 0o640,
  content: { inline: { encoding: "", data: placeholder }, transmitUnencoded: true },
});

/**
 * The provision ("node-init") OSC of spec §3 for one worker pool, without the registry-CA variant
 * (our init.sh fetches the registry CA itself when GNA_REGISTRY_CA_API_SERVER is set in /etc/environment).
 */
export function buildProvisionOsc(input: ProvisionInput): Osc {
  const files: OscFile[] = [
    b64File(clusterCaPath, 0o640, input.caBundle),
    placeholderFile(bootstrapTokenPath, bootstrapTokenPlaceholder),
    b64File(initScriptPath, 0o755, renderInitScript(input.initScript, input.image)),
    placeholderFile(machineNamePath, machineNamePlaceholder),
    b64File(`/var/lib/gardener-node-agent/config-${input.version}.yaml`, 0o600, renderInitConfig(input)),
  ];
  const units: Unit[] = [
    { name: initUnitName, command: "start", enable: true, content: initUnitContent, filePaths: [initScriptPath], dropIns: undefined },
  ];
  return {
    apiVersion: "extensions.gardener.cloud/v1alpha1",
    kind: "OperatingSystemConfig",
    spec: { type: "", purpose: "provision", files, units, criConfig: undefined, inPlaceUpdates: undefined },
    status: { extensionUnits: undefined, extensionFiles: undefined, inPlaceUpdates: undefined },
  };
}
