import type { Cluster, Fixtures } from './cluster.ts';
import type { ApiInfo } from './context.ts';
import { KubeAdmin } from './kube.ts';
import { readFileSync } from 'node:fs';

/** The cluster behind the API server simulator; undefined for the connectivity-only stand-in. */
export function createCluster(info: ApiInfo, _signal: AbortSignal): Cluster | undefined {
  if (info.standin === true) return undefined;
  const kube = new KubeAdmin({ url: info.url, caPem: readFileSync(info.caFile, 'utf8'), token: info.adminToken });
  return {
    kube,
    async setup(f: Fixtures, signal: AbortSignal) {
      await kube.apply('/api/v1/namespaces/kube-system/secrets', f.oscSecret, signal);
      await kube.apply('/api/v1/namespaces/kube-system/secrets', f.tokenSecret, signal);
      throw new Error('simulator control API (bootstrap token, machine→node, CSR signing) not wired yet');
    },
    async approveAndSign(_csrName: string, _signal: AbortSignal) {
      throw new Error('simulator control API not wired yet');
    },
  };
}
