import { stringify } from "yaml";
import type { Osc, OscFile, Unit } from "../osc/index.ts";
import { formatImageReference, parseImageReference, registryEndpoint } from "../registry/index.ts";
import { RenderError } from "./errors.ts";

/** Paths and names of the node-init OSC (spec §2, §3). */
const initScriptPath = "/var/lib/gardener-node-agent/init.sh";
const clusterCaPath = "/var/lib/gardener-node-agent/cluster-ca.crt";
const bootstrapTokenPath = "/var/lib/gardener-node-agent/credentials/bootstrap-token";
const machineNamePath = "/var/lib/gardener-node-agent/machine-name";
const initUnitName = "gardener-node-init.service";
const bootstrapTokenPlaceholder = "<<BOOTSTRAP_TOKEN>>";
const machineNamePlaceholder = "<<MACHINE_NAME>>";
/** Template points of cloud-init/init.sh: line 2 `IMAGE="${GNA_IMAGE:-__IMAGE__}"`, line 3 the registry-CA API server. */
export const initScriptImagePlaceholder = "__IMAGE__";
export const initScriptRegistryCaPlaceholder = "__REGISTRY_CA_API_SERVER__";
const updateCaScriptPath = "/var/lib/ssl/update-local-ca-certificates.sh";
const cosignKeyPath = "/var/lib/gardener-node-agent/cosign.pub";

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
  /**
   * cosign public key (PEM, ECDSA P-256) written to /var/lib/gardener-node-agent/cosign.pub; init.sh then
   * installs only an image signed by it (our addition to spec §3.2).
   */
  readonly cosignPublicKey?: string | undefined;
}

/**
 * gardener-node-init.service (spec §3.1), no trailing newline. With the registry CA, line 3 is
 * `Wants=containerd.service` (init.sh restarts containerd; a hard dependency would stop the init unit too).
 */
const initUnitContentFor = (registryCa: boolean): string => `[Unit]
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
const updateCaScript = `#!/bin/bash
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
 * The init config (spec §3.2): gardenlet's document without the fields it writes as zero values
 * (`clientConnection`'s `""`/`0`, empty `logFormat`/`logLevel`, `server: {}`, `systemdUnitCheck: {}`), which
 * the agent defaults on decoding exactly as it defaults absent fields, and without `apiVersion`/`kind`, which
 * the decoder fills in from the target type (spec §5.1): the decoded configuration is the same, and user
 * data is ~115 gzipped bytes shorter. Keys sorted like gardenlet's, `bootstrap` always set, and
 * `token.syncPeriod: 12h0m0s` kept (gardenlet's value, not the default). The reconcile OSC replaces the file
 * with gardenlet's own on the first apply.
 */
export function renderInitConfig(
  input: Pick<ProvisionInput, "server" | "secretName" | "kubernetesVersion" | "kubeletDataVolumeSize">,
): string {
  const doc = {
    apiServer: { caFile: clusterCaPath, server: input.server },
    bootstrap: input.kubeletDataVolumeSize === undefined ? {} : { kubeletDataVolumeSize: input.kubeletDataVolumeSize },
    controllers: {
      operatingSystemConfig: { kubernetesVersion: input.kubernetesVersion, secretName: input.secretName },
      token: { syncPeriod: "12h0m0s" },
    },
  };
  return stringify(doc, { sortMapEntries: true, indentSeq: false, lineWidth: 0 });
}

// The image lands inside a double-quoted shell word of init.sh: allow reference characters only.
const imageReference = /^[A-Za-z0-9][A-Za-z0-9._:/@+-]*$/;

/**
 * The reference as init.sh pulls it: `host[:port]/repo[:tag][@digest]` with the registry spelled out
 * (Docker Hub names become `registry-1.docker.io/library/…`), so the script needs no parser of its own.
 * No scheme: a plain-HTTP registry is a node setting (GNA_REGISTRY_PLAIN_HTTP=1 in /etc/environment).
 */
export function pullReference(image: string): string {
  if (/^[a-z]+:\/\//.test(image)) {
    throw new RenderError("invalid", "image", "the image reference takes no scheme (plain HTTP: GNA_REGISTRY_PLAIN_HTTP=1 on the node)");
  }
  try {
    const ref = parseImageReference(image);
    return formatImageReference({ ...ref, registry: registryEndpoint(ref.registry) });
  } catch (err) {
    throw new RenderError("invalid", "image", err instanceof Error ? err.message : String(err));
  }
}

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
/** init.sh's check for an unrendered template: dead code once line 2 holds the reference, so user data drops it. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a template
const templateCheckStart = '[ -n "${IMAGE%__IMAGE__}" ]';
const cosignBlockStart = 'if [ -f "$K" ]; then';
/** Ends a line that only the signature check needs: dropped without it, the marker dropped with it. */
const signatureOnlyMarker = " # signature check only";
/**
 * Stands in for init.sh's signature check when the user data carries no cosign key: a `cosign.pub`
 * placed some other way (image, another user-data part) stops the run instead of being ignored.
 */
export const cosignRefusal = '[ ! -f "$K" ] || die "$K exists; render user data with --cosign-key"';

export interface InitScriptOptions {
  /** Keep the registry-CA block (spec §3.3 step 3). */
  readonly registryCa: boolean;
  /** Keep the cosign signature check; without it, init.sh refuses to run when cosign.pub exists. */
  readonly verifySignature: boolean;
}

/** `lines` without the block from the line starting with `start` to the next `fi` at column 0, `instead` in its place. */
function replaceBlock(lines: readonly string[], start: string, instead: readonly string[]): string[] {
  const from = lines.findIndex((l) => l.startsWith(start));
  const to = from < 0 ? -1 : lines.findIndex((l, i) => i > from && l === "fi");
  return to < 0 ? [...lines] : [...lines.slice(0, from), ...instead, ...lines.slice(to + 1)];
}

/**
 * init.sh as user data carries it: compacted, and without the blocks the rendered node cannot use.
 * The registry-CA block (from `if [ -n "$REGISTRY_CA_API_SERVER" ]` to the next `fi` at the start of
 * a line) and line 3, which only feeds it, go when the registry CA is off; the signature check
 * (`if [ -f "$K" ]; then` … `fi`) goes without a cosign key and leaves {@link cosignRefusal}; the
 * unrendered-template check (a line starting with `[ -n "${IMAGE%__IMAGE__}" ]`) always goes, and so
 * do lines ending in `# signature check only` when the signature check goes.
 * A template without those blocks is only compacted.
 */
export function initScriptForUserData(template: string, opts: InitScriptOptions): string {
  let lines = template.split("\n");
  if (!opts.registryCa && lines.some((l) => l.startsWith(registryCaBlockStart))) {
    // Line 3 only feeds the block: both go.
    lines = replaceBlock(lines, registryCaBlockStart, []).filter((l) => !l.startsWith("REGISTRY_CA_API_SERVER="));
  }
  if (!opts.verifySignature) lines = replaceBlock(lines, cosignBlockStart, [cosignRefusal]);
  lines = lines.flatMap((l) => {
    if (!l.endsWith(signatureOnlyMarker)) return [l];
    return opts.verifySignature ? [l.slice(0, -signatureOnlyMarker.length)] : [];
  });
  lines = lines.filter((l) => !l.startsWith(templateCheckStart));
  return compactShell(lines.join("\n"));
}

/**
 * init.sh with its two template points filled (first occurrences only: lines 2 and 3; later mentions,
 * such as init.sh's own "not rendered" check, must stay). `registryCaServer` "" = registry CA off.
 */
export function renderInitScript(template: string, image: string, registryCaServer = "", verifySignature = false): string {
  if (!imageReference.test(image)) throw new RenderError("invalid", "image", `invalid image reference "${image}"`);
  const ref = pullReference(image);
  if (registryCaServer !== "" && !serverUrl.test(registryCaServer)) {
    throw new RenderError("invalid", "server", `invalid API server URL "${registryCaServer}"`);
  }
  for (const placeholder of [initScriptImagePlaceholder, initScriptRegistryCaPlaceholder]) {
    if (!template.includes(placeholder))
      throw new RenderError("invalid", "initScript", `init.sh template has no ${placeholder} placeholder`);
  }
  return initScriptForUserData(template, { registryCa: registryCaServer !== "", verifySignature })
    .replace(initScriptImagePlaceholder, () => ref)
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
  const cosignKey = input.cosignPublicKey;
  if (cosignKey !== undefined && !/^-----BEGIN PUBLIC KEY-----\n[A-Za-z0-9+/=\n]+\n-----END PUBLIC KEY-----\n?$/.test(cosignKey)) {
    throw new RenderError("invalid", "cosignPublicKey", "the cosign key is not one PEM public key (-----BEGIN PUBLIC KEY-----)");
  }
  const files: OscFile[] = [
    b64File(clusterCaPath, 0o640, input.caBundle),
    placeholderFile(bootstrapTokenPath, bootstrapTokenPlaceholder),
    b64File(
      initScriptPath,
      0o755,
      renderInitScript(input.initScript, input.image, registryCa ? input.server : "", cosignKey !== undefined),
    ),
    placeholderFile(machineNamePath, machineNamePlaceholder),
    ...(registryCa ? [b64File(updateCaScriptPath, 0o744, updateCaScript)] : []),
    ...(cosignKey === undefined ? [] : [b64File(cosignKeyPath, 0o644, cosignKey)]),
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
