// A control-plane node of a self-hosted shoot (bootstrap-and-config.md §11.1): the compiled agent,
// configured with the sync configs gardenlet gives a control-plane pool, copies the three
// shoot-access tokens to the static pods' and the admin's paths with mode 0640, and labels its Node
// as control plane because the OSC carries the kube-apiserver manifest.
import { expect, test } from "bun:test";
import { statSync } from "node:fs";
import { join } from "node:path";
import { tokenSyncConfigs } from "../../src/render/token-sync.ts";
import { eventually } from "../harness/eventually.ts";
import { useSandbox } from "../harness/sandbox-hooks.ts";

const osc = `apiVersion: extensions.gardener.cloud/v1alpha1
kind: OperatingSystemConfig
spec:
  files:
  - path: /etc/kubernetes/manifests/kube-apiserver.yaml
    permissions: 384
    content: {inline: {data: "{apiVersion: v1, kind: Pod, metadata: {name: kube-apiserver, namespace: kube-system}, spec: {containers: [{name: kube-apiserver, image: kube-apiserver}]}}\\n"}}
`;

const startSandbox = useSandbox();

test("a control-plane node syncs the three shoot-access tokens to their paths with mode 0640", async () => {
  const secretName = "gardener-node-agent-control-plane";
  const sb = await startSandbox({
    nodeName: "cp-node",
    secretName,
    extraConfig: {
      controllers: {
        operatingSystemConfig: { secretName, kubernetesVersion: "1.33.0" },
        token: { syncConfigs: tokenSyncConfigs({ controlPlane: true }), syncPeriod: "12h0m0s" },
      },
    },
  });
  const tokens: Record<string, string> = {
    "shoot-access-kube-controller-manager": "kcm-token",
    "shoot-access-kube-scheduler": "scheduler-token",
    "shoot-access-cluster-admin": "admin-token",
  };
  for (const [name, token] of Object.entries(tokens)) {
    sb.sim.store.create("secrets", {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name, namespace: "kube-system" },
      data: { token: Buffer.from(token).toString("base64") },
    });
  }
  sb.setOsc(osc);
  const agent = sb.spawnAgent();
  // The checksum itself waits for the kube-apiserver mirror pod (no kubelet here): the static pod gate.
  await eventually(
    "the static pod gate",
    () => {
      const status = sb.node()?.["status"] as { conditions?: { type: string; reason?: string }[] } | undefined;
      const applied = status?.conditions?.find((c) => c.type === "OperatingSystemConfigApplied");
      return applied?.reason === "WaitingForStaticPods" ? true : undefined;
    },
    { timeoutMs: 30_000 },
  );

  const expected: Record<string, string> = {
    "/var/lib/static-pods/kube-controller-manager/kubeconfig/token": "kcm-token",
    "/var/lib/static-pods/kube-scheduler/kubeconfig/token": "scheduler-token",
    "/etc/kubernetes/admin-token": "admin-token",
  };
  for (const [path, token] of Object.entries(expected)) {
    await eventually(path, () => (Bun.file(join(sb.root, path)).size > 0 ? true : undefined), { timeoutMs: 30_000 });
    expect(await sb.readHostFile(path)).toBe(token);
    expect(statSync(join(sb.root, path)).mode & 0o777).toBe(0o640);
  }
  const labels = (sb.node()?.["metadata"] as { labels: Record<string, string> }).labels;
  expect(labels["node-role.kubernetes.io/control-plane"]).toBe("");
  expect(labels["node-role.kubernetes.io/worker"]).toBeUndefined();
  expect(await agent.stop()).toBe(0);
}, 60_000);
