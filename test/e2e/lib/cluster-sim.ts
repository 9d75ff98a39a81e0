import { readFileSync } from "node:fs";
import type { Cluster, Fixtures } from "./cluster.ts";
import type { ApiInfo } from "./context.ts";
import { KubeAdmin } from "./kube.ts";

/** A call to the control API of test/e2e/sim-host.ts. */
async function control(controlUrl: string, body: Record<string, string>, signal: AbortSignal): Promise<unknown> {
  const res = await fetch(controlUrl, {
    method: "POST",
    body: JSON.stringify(body),
    headers: { "content-type": "application/json" },
    signal,
  });
  const answer: unknown = await res.json();
  if (!res.ok) throw new Error(`simulator control ${body["op"]}: ${JSON.stringify(answer)}`);
  return answer;
}

/** The cluster behind the API server simulator run by test/e2e/sim-host.ts. */
export function createCluster(info: ApiInfo): Cluster {
  const controlUrl = info.controlUrl;
  const kube = new KubeAdmin({ url: info.url, caPem: readFileSync(info.caFile, "utf8"), token: info.adminToken });
  return {
    kube,
    async setup(f: Fixtures, signal: AbortSignal) {
      await control(controlUrl, { op: "bootstrap-token", id: f.bootstrapToken.id, secret: f.bootstrapToken.secret }, signal);
      // No kubelet in the VM: the Node is registered up front, labelled as kubelet + machine-controller-manager would.
      await kube.apply(
        "/api/v1/nodes",
        {
          apiVersion: "v1",
          kind: "Node",
          metadata: {
            name: f.nodeName,
            labels: {
              "kubernetes.io/hostname": f.hostname,
              "worker.gardener.cloud/pool": "e2e",
              "worker.gardener.cloud/gardener-node-agent-secret-name": f.oscSecret.metadata.name,
            },
          },
        },
        signal,
      );
      await control(controlUrl, { op: "machine-node", machine: f.machineName, node: f.nodeName }, signal);
      await control(controlUrl, { op: "allow-secret", machine: f.machineName, secret: f.oscSecret.metadata.name }, signal);
      await kube.apply("/api/v1/namespaces/kube-system/secrets", f.oscSecret, signal);
      await kube.apply("/api/v1/namespaces/kube-system/secrets", f.tokenSecret, signal);
    },
    async approveAndSign(csrName: string, signal: AbortSignal) {
      await control(controlUrl, { op: "approve-sign-csr", name: csrName }, signal);
    },
  };
}
