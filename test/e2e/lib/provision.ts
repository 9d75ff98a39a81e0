import { existsSync } from 'node:fs';
import { join } from 'node:path';

export interface ProvisionInput {
  readonly repo: string;
  readonly agentBinary: string;
  readonly imageRef: string; // as the guest pulls it, by digest
  readonly apiServerUrl: string; // as the guest sees it
  readonly caPem: string;
  readonly oscSecretName: string;
  readonly kubernetesVersion: string;
  readonly kubeletDataVolumeSize: number;
  readonly bootstrapToken: string;
  readonly machineName: string;
}

export type ProvisionResult = { readonly script: string } | { readonly missing: string };

/**
 * The project's own provision user data: the node-init OSC rendered by `gardener-node-agent render`, with the
 * placeholders replaced the way machine-controller-manager does it.
 */
export function provisionUserData(input: ProvisionInput): ProvisionResult {
  if (!existsSync(input.agentBinary)) return { missing: `${input.agentBinary} not built` };
  if (!existsSync(join(input.repo, 'cloud-init', 'init.sh'))) return { missing: 'cloud-init/init.sh not in the repo yet' };
  if (input.imageRef.endsWith('@')) return { missing: 'no artifact pushed (oci/push.ts or dist/oci missing)' };
  return { missing: 'render --provision not wired into the harness yet' };
}

/** MCM's placeholder substitution (bootstrap-and-config.md §1 step 4). */
export const substitutePlaceholders = (script: string, token: string, machine: string): string =>
  script.replaceAll('<<BOOTSTRAP_TOKEN>>', token).replaceAll('<<MACHINE_NAME>>', machine);
