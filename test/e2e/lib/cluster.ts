import type { KubeAdmin, KubeObject } from "./kube.ts";

/** What the scenario puts into the cluster before the VM boots. */
export interface Fixtures {
  readonly bootstrapToken: { readonly id: string; readonly secret: string };
  readonly machineName: string;
  readonly nodeName: string;
  readonly hostname: string;
  readonly oscSecret: KubeObject;
  readonly tokenSecret: KubeObject;
}

/**
 * The cluster as the scenario drives it: plain Kubernetes REST with the admin token, plus what only the
 * simulator's control API can do (accept a bootstrap token, map a Machine to its Node, sign a CSR).
 */
export interface Cluster {
  readonly kube: KubeAdmin;
  setup(fixtures: Fixtures, signal: AbortSignal): Promise<void>;
  /** Approves the CSR and issues its certificate (kube-controller-manager's job in a real cluster). */
  approveAndSign(csrName: string, signal: AbortSignal): Promise<void>;
}
