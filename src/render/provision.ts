import { stringify } from "yaml";
import type { Osc, OscFile, Unit } from "../osc/index.ts";
import { RenderError } from "./errors.ts";

/** Paths and names of the node-init OSC (spec §2, §3). */
export const initScriptPath = "/var/lib/gardener-node-agent/init.sh";
export const clusterCaPath = "/var/lib/gardener-node-agent/cluster-ca.crt";
export const bootstrapTokenPath = "/var/lib/gardener-node-agent/credentials/bootstrap-token";
export const machineNamePath = "/var/lib/gardener-node-agent/machine-name";
export const initUnitName = "gardener-node-init.service";
export const bootstrapTokenPlaceholder = "<<BOOTSTRAP_TOKEN>>";
export const machineNamePlaceholder = "<<MACHINE_NAME>>";
/** Template points of cloud-init/init.sh: line 2 `IMAGE="${GNA_IMAGE:-__IMAGE__}"`, line 3 the registry-CA API server. */
export const initScriptImagePlaceholder = "__IMAGE__";
export const initScriptRegistryCaPlaceholder = "__REGISTRY_CA_API_SERVER__";
export const updateCaScriptPath = "/var/lib/ssl/update-local-ca-certificates.sh";

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
  /** Registry CA enabled (spec §3.2 #5, §3.3 step 3): init.sh fetches it from the API server first. */
  readonly registryCa?: boolean | undefined;
}

/**
 * gardener-node-init.service (spec §3.1), no trailing newline. With the registry CA, line 3 is
 * `Wants=containerd.service` (init.sh restarts containerd; a hard dependency would stop the init unit too).
 */
export const initUnitContentFor = (registryCa: boolean): string => `[Unit]
Description=Downloads the gardener-node-agent binary from the container registry and bootstraps it.
${registryCa ? "Wants" : "Requires"}=containerd.service
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

/** Refreshes the system trust store after init.sh placed the registry CA (Debian/Ubuntu, SUSE, RHEL families). */
export const updateCaScript = `#!/bin/bash
set -o errexit
if command -v update-ca-certificates >/dev/null && [[ -d /usr/local/share/ca-certificates ]]; then
  # Debian family: local CAs are picked up from /usr/local/share/ca-certificates.
  cp /var/lib/ca-certificates-local/registry-ca.crt /usr/local/share/ca-certificates/registry-ca.crt
  update-ca-certificates
elif command -v update-ca-certificates >/dev/null; then
  # SUSE family: init.sh already placed /etc/pki/trust/anchors/registry-ca.pem.
  update-ca-certificates
elif command -v update-ca-trust >/dev/null; then
  cp /var/lib/ca-certificates-local/registry-ca.crt /etc/pki/ca-trust/source/anchors/registry-ca.crt
  update-ca-trust extract
fi
`;

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

// The registry-CA server lands in a double-quoted shell word too.
const serverUrl = /^https?:\/\/[A-Za-z0-9._:[\]/-]+$/;

/**
 * init.sh as it goes into user data: comment lines, blank lines and indentation removed (the shebang
 * and heredoc bodies stay as they are). The source keeps its comments; the node does not need them,
 * and user data is capped (~16 KiB, shared with the CA bundle and the bootstrap token).
 */
export function compactShell(script: string): string {
  const out: string[] = [];
  let heredocEnd: string | undefined;
  script.split("\n").forEach((line, i) => {
    if (heredocEnd !== undefined) {
      out.push(line);
      if (line === heredocEnd) heredocEnd = undefined;
      return;
    }
    const text = line.trimStart();
    if (i === 0 ? false : text === "" || text.startsWith("#")) return;
    out.push(i === 0 ? line : text);
    heredocEnd = /<<-?\s*['"]?([A-Za-z_][A-Za-z0-9_]*)['"]?/.exec(text)?.[1];
  });
  return `${out.join("\n")}\n`;
}

const registryCaBlockStart = 'if [ -n "$REGISTRY_CA_API_SERVER" ]';

/**
 * init.sh as user data carries it: compacted, and without the registry-CA block (from its
 * `if [ -n "$REGISTRY_CA_API_SERVER" ]` line to the next `fi` at the start of a line) when the registry
 * CA is off, where line 3 leaves it dead code. A template without that block is only compacted.
 */
export function initScriptForUserData(template: string, registryCa: boolean): string {
  if (registryCa) return compactShell(template);
  const lines = template.split("\n");
  const start = lines.findIndex((l) => l.startsWith(registryCaBlockStart));
  const end = start < 0 ? -1 : lines.findIndex((l, i) => i > start && l === "fi");
  return compactShell(end < 0 ? template : [...lines.slice(0, start), ...lines.slice(end + 1)].join("\n"));
}

/**
 * init.sh with its two template points filled (first occurrences only: lines 2 and 3; later mentions,
 * such as init.sh's own "not rendered" check, must stay). `registryCaServer` "" = registry CA off.
 */
export function renderInitScript(template: string, image: string, registryCaServer = ""): string {
  if (!imageReference.test(image)) throw new RenderError("invalid", "image", `invalid image reference "${image}"`);
  if (registryCaServer !== "" && !serverUrl.test(registryCaServer)) {
    throw new RenderError("invalid", "server", `invalid API server URL "${registryCaServer}"`);
  }
  for (const placeholder of [initScriptImagePlaceholder, initScriptRegistryCaPlaceholder]) {
    if (!template.includes(placeholder)) throw new RenderError("invalid", "initScript", `init.sh template has no ${placeholder} placeholder`);
  }
  return initScriptForUserData(template, registryCaServer !== "")
    .replace(initScriptImagePlaceholder, () => image)
    .replace(initScriptRegistryCaPlaceholder, () => registryCaServer);
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

/** The provision ("node-init") OSC of spec §3 for one worker pool; files and unit in spec order. */
export function buildProvisionOsc(input: ProvisionInput): Osc {
  const registryCa = input.registryCa === true;
  const files: OscFile[] = [
    b64File(clusterCaPath, 0o640, input.caBundle),
    placeholderFile(bootstrapTokenPath, bootstrapTokenPlaceholder),
    b64File(initScriptPath, 0o755, renderInitScript(input.initScript, input.image, registryCa ? input.server : "")),
    placeholderFile(machineNamePath, machineNamePlaceholder),
    ...(registryCa ? [b64File(updateCaScriptPath, 0o744, updateCaScript)] : []),
    b64File(`/var/lib/gardener-node-agent/config-${input.version}.yaml`, 0o600, renderInitConfig(input)),
  ];
  const units: Unit[] = [
    {
      name: initUnitName,
      command: "start",
      enable: true,
      content: initUnitContentFor(registryCa),
      filePaths: [initScriptPath],
      dropIns: undefined,
    },
  ];
  return {
    apiVersion: "extensions.gardener.cloud/v1alpha1",
    kind: "OperatingSystemConfig",
    spec: { type: "", purpose: "provision", files, units, criConfig: undefined, inPlaceUpdates: undefined },
    status: { extensionUnits: undefined, extensionFiles: undefined, inPlaceUpdates: undefined },
  };
}
