import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHostFs } from "../host/index.ts";
import type { HostFs } from "../host/index.ts";
import { ensureKubeletBootstrapKubeconfig, removeBootstrapCredentials } from "./kubelet-bootstrap.ts";

const apiServer = { server: "https://server", caFile: "/var/lib/gardener-node-agent/cluster-ca.crt" };
const expected = `apiVersion: v1
clusters:
- cluster:
    certificate-authority: /var/lib/gardener-node-agent/cluster-ca.crt
    server: https://server
  name: kubelet-bootstrap
contexts:
- context:
    cluster: kubelet-bootstrap
    user: kubelet-bootstrap
  name: kubelet-bootstrap
current-context: kubelet-bootstrap
kind: Config
users:
- name: kubelet-bootstrap
  user:
    token: bootstrap-token
`;

describe("ensureKubeletBootstrapKubeconfig", () => {
  let root: string;
  let host: HostFs;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "gna-kubelet-bs-"));
    host = createHostFs(root);
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  test("writes nothing and creates no kubelet dir without a bootstrap token", async () => {
    expect(await ensureKubeletBootstrapKubeconfig(host, apiServer)).toBe("no-bootstrap-token");
    expect(await host.stat("/var/lib/kubelet")).toBeUndefined();
  });

  test.each(["/var/lib/kubelet/kubeconfig-real", "/var/lib/kubelet/pki/kubelet-client-current.pem"])(
    "writes nothing when kubelet already has %s",
    async (marker) => {
      await host.writeFileAtomic("/var/lib/gardener-node-agent/credentials/bootstrap-token", "bootstrap-token\n", 0o640);
      await host.writeFileAtomic(marker, "x", 0o600);
      expect(await ensureKubeletBootstrapKubeconfig(host, apiServer)).toBe("kubelet-already-bootstrapped");
      expect(await host.stat("/var/lib/kubelet/kubeconfig-bootstrap")).toBeUndefined();
    },
  );

  test("writes the exact kubeconfig with the trimmed token and mode 0600", async () => {
    await host.writeFileAtomic("/var/lib/gardener-node-agent/credentials/bootstrap-token", " bootstrap-token\n", 0o640);
    expect(await ensureKubeletBootstrapKubeconfig(host, { ...apiServer, server: "server" })).toBe("written");
    expect(await host.readText("/var/lib/kubelet/kubeconfig-bootstrap")).toBe(expected);
    expect((await host.stat("/var/lib/kubelet/kubeconfig-bootstrap"))?.mode).toBe(0o600);
  });

  test("removeBootstrapCredentials deletes the kubelet bootstrap kubeconfig and the token", async () => {
    await host.writeFileAtomic("/var/lib/gardener-node-agent/credentials/bootstrap-token", "t", 0o640);
    await ensureKubeletBootstrapKubeconfig(host, apiServer);
    await removeBootstrapCredentials(host);
    await removeBootstrapCredentials(host);
    expect(await host.stat("/var/lib/kubelet/kubeconfig-bootstrap")).toBeUndefined();
    expect(await host.stat("/var/lib/gardener-node-agent/credentials/bootstrap-token")).toBeUndefined();
  });
});
