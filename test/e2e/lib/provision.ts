import { existsSync } from "node:fs";

export interface ProvisionInput {
  readonly agentBinary: string;
  readonly imageRef: string; // as the guest pulls it, by digest
  readonly apiServerUrl: string; // as the guest sees it
  readonly caFile: string;
  readonly oscSecretName: string;
  readonly kubernetesVersion: string;
  readonly kubeletDataVolumeSize: number;
}

export type ProvisionResult = { readonly script: string } | { readonly missing: string };

/**
 * The project's own provision user data: `gardener-node-agent render --provision` builds the node-init OSC (spec §3)
 * and renders it as the upstream bash script (§12); placeholders stay for substitutePlaceholders.
 */
export function provisionUserData(input: ProvisionInput): ProvisionResult {
  if (!existsSync(input.agentBinary)) return { missing: `${input.agentBinary} not built` };
  if (input.imageRef.endsWith("@")) return { missing: "no artifact pushed (oci/push.ts or dist/oci missing)" };
  const res = Bun.spawnSync(
    [
      input.agentBinary,
      "render",
      "--provision",
      "--format=bash",
      `--server=${input.apiServerUrl}`,
      `--ca-file=${input.caFile}`,
      `--image=${input.imageRef}`,
      `--secret-name=${input.oscSecretName}`,
      `--kubernetes-version=${input.kubernetesVersion}`,
      `--kubelet-data-volume-size=${input.kubeletDataVolumeSize}`,
    ],
    { stderr: "pipe" },
  );
  if (res.exitCode !== 0) return { missing: `render --provision failed (${res.exitCode}): ${res.stderr.toString().trim().split("\n")[0]}` };
  return { script: res.stdout.toString() };
}

/** machine-controller-manager's placeholder substitution (bootstrap-and-config.md §1 step 4). */
export const substitutePlaceholders = (script: string, token: string, machine: string): string =>
  script.replaceAll("<<BOOTSTRAP_TOKEN>>", token).replaceAll("<<MACHINE_NAME>>", machine);
