import { createHash } from "node:crypto";
import { stringify } from "yaml";
import { agentUnitContent } from "../../../src/bootstrap/unit.ts";
import type { KubeObject } from "./kube.ts";

/** Everything the documents below are built from; decided once per run by `prepare`. */
export interface ScenarioIdentity {
  readonly agentVersion: string;
  readonly apiServerUrl: string; // as the guest sees it
  readonly caPem: string;
  readonly oscSecretName: string;
  readonly kubernetesVersion: string;
  readonly tokenSecretName: string;
  readonly tokenPath: string;
}

const agentConfigPath = (version: string): string => `/var/lib/gardener-node-agent/config-${version}.yaml`;
const caPath = "/var/lib/gardener-node-agent/cluster-ca.crt";

/** The unit of spec §6.2, the same the bootstrap sub-command writes. */
const agentUnit = agentUnitContent;

/** The agent config as gardenlet puts it into the reconcile OSC (no bootstrap section, token sync configured). */
function reconcileAgentConfig(id: ScenarioIdentity): string {
  return stringify({
    apiVersion: "nodeagent.config.gardener.cloud/v1alpha1",
    kind: "NodeAgentConfiguration",
    apiServer: { caFile: caPath, server: id.apiServerUrl },
    controllers: {
      operatingSystemConfig: { kubernetesVersion: id.kubernetesVersion, secretName: id.oscSecretName },
      token: { syncConfigs: [{ secretName: id.tokenSecretName, path: id.tokenPath }], syncPeriod: "12h0m0s" },
    },
  });
}

const b64 = (text: string): string => Buffer.from(text).toString("base64");

export const standinUnit = "gna-e2e-kubelet.service";
export const oneshotUnit = "gna-e2e-oneshot.service";
const slowUnit = "gna-e2e-slow.service";

/** Files the scenario checks on the guest: path → expected mode (octal text as `stat -c %a` prints it). */
export interface ExpectedFile {
  readonly path: string;
  readonly mode: string;
  readonly content: string;
}

export interface OscVersion {
  readonly yaml: string;
  readonly checksum: string;
  readonly files: readonly ExpectedFile[];
  readonly units: readonly string[];
}

const standinScript = `#!/bin/sh
# Stand-in for kubelet: shows which config generation it started with, then idles.
mkdir -p /run/gna-e2e
cp /etc/gna-e2e/kubelet.conf /run/gna-e2e/kubelet.seen
exec sleep infinity
`;

/**
 * The reconcile OSC in three generations: 1 = initial apply, 2 = only the stand-in kubelet's config changes,
 * 3 = adds a slow oneshot unit (the apply takes long enough to be interrupted).
 */
export function reconcileOsc(id: ScenarioIdentity, generation: 1 | 2 | 3): OscVersion {
  const config = reconcileAgentConfig(id);
  const files: (ExpectedFile & { encoding: "" | "b64" })[] = [
    { path: agentConfigPath(id.agentVersion), mode: "600", content: config, encoding: "b64" },
    { path: caPath, mode: "640", content: id.caPem, encoding: "b64" },
    { path: "/etc/gna-e2e/kubelet.conf", mode: "644", content: `generation=${generation === 1 ? 1 : 2}\n`, encoding: "" },
    { path: "/opt/gna-e2e/bin/kubelet-standin", mode: "755", content: standinScript, encoding: "b64" },
    { path: "/etc/gna-e2e/oneshot.conf", mode: "600", content: "oneshot=1\n", encoding: "" },
  ];
  const units: Record<string, unknown>[] = [
    {
      name: "gardener-node-agent.service",
      enable: true,
      content: agentUnit,
      // Drift checks every 5 s instead of every syncPeriod (10 min), so step 8 does not wait that long.
      dropIns: [{ name: "90-e2e-drift-check.conf", content: "[Service]\nEnvironment=GARDENER_NODE_AGENT_TIMINGS=driftCheckPeriod=5s\n" }],
      filePaths: [agentConfigPath(id.agentVersion), caPath],
    },
    {
      name: standinUnit,
      enable: true,
      command: "start",
      content:
        "[Unit]\nDescription=gna-e2e stand-in for kubelet\n[Service]\nType=simple\nExecStart=/opt/gna-e2e/bin/kubelet-standin\nRestart=always\nRestartSec=2\n[Install]\nWantedBy=multi-user.target\n",
      filePaths: ["/etc/gna-e2e/kubelet.conf", "/opt/gna-e2e/bin/kubelet-standin"],
    },
    {
      name: oneshotUnit,
      enable: true,
      command: "start",
      content:
        "[Unit]\nDescription=gna-e2e oneshot\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/sh -c 'cat /etc/gna-e2e/oneshot.conf > /run/gna-e2e-oneshot.out'\n[Install]\nWantedBy=multi-user.target\n",
      dropIns: [{ name: "10-e2e.conf", content: "[Service]\nEnvironment=GNA_E2E_DROPIN=1\n" }],
      filePaths: ["/etc/gna-e2e/oneshot.conf"],
    },
  ];
  if (generation === 3) {
    files.push({ path: "/etc/gna-e2e/slow.conf", mode: "644", content: "sleep=8\n", encoding: "" });
    units.push({
      name: slowUnit,
      enable: true,
      command: "start",
      content:
        "[Unit]\nDescription=gna-e2e slow oneshot\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/sleep 8\nExecStart=/bin/cp /etc/gna-e2e/slow.conf /run/gna-e2e-slow.done\n[Install]\nWantedBy=multi-user.target\n",
      filePaths: ["/etc/gna-e2e/slow.conf"],
    });
  }
  const osc = {
    apiVersion: "extensions.gardener.cloud/v1alpha1",
    kind: "OperatingSystemConfig",
    metadata: {},
    spec: {
      purpose: "",
      type: "",
      files: files.map((f) => ({
        path: f.path,
        permissions: Number.parseInt(f.mode, 8),
        content: { inline: { encoding: f.encoding, data: f.encoding === "b64" ? b64(f.content) : f.content } },
      })),
      units,
    },
  };
  const yaml = stringify(osc);
  return {
    yaml,
    checksum: createHash("sha256").update(yaml).digest("hex"),
    files,
    units: units.map((u) => String(u["name"])),
  };
}

/** The OSC Secret as gardenlet writes it (spec osc-controller §1.1). */
export function oscSecret(id: ScenarioIdentity, osc: OscVersion): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: id.oscSecretName,
      namespace: "kube-system",
      labels: { "gardener.cloud/role": "operating-system-config", "worker.gardener.cloud/pool": "e2e" },
      annotations: { "checksum/data-script": osc.checksum },
    },
    type: "Opaque",
    data: { "osc.yaml": b64(osc.yaml) },
  };
}
