import { describe, expect, test } from "bun:test";
import { CredentialsRotationError, renderRotationBootstrapKubeconfig } from "./credentials.ts";

const real = `apiVersion: v1
kind: Config
clusters:
- name: default-cluster
  cluster:
    server: https://old.example
    certificate-authority-data: T0xE
contexts:
- name: default-context
  context:
    cluster: default-cluster
    user: default-auth
current-context: default-context
users:
- name: default-auth
  user:
    client-certificate: /var/lib/kubelet/pki/kubelet-client-current.pem
    client-key: /var/lib/kubelet/pki/kubelet-client-current.pem
`;

describe("renderRotationBootstrapKubeconfig", () => {
  test("should point at the configured API server and CA file and embed kubelet's current certificate", () => {
    const pem = new TextEncoder().encode("CERT+KEY");
    expect(
      renderRotationBootstrapKubeconfig(real, pem, {
        server: "https://api.example",
        caFile: "/var/lib/gardener-node-agent/cluster-ca.crt",
      }),
    ).toBe(`apiVersion: v1
clusters:
- cluster:
    certificate-authority: /var/lib/gardener-node-agent/cluster-ca.crt
    server: https://api.example
  name: default-cluster
contexts:
- context:
    cluster: default-cluster
    user: default-auth
  name: default-context
current-context: default-context
kind: Config
users:
- name: default-auth
  user:
    client-certificate-data: Q0VSVCtLRVk=
    client-key-data: Q0VSVCtLRVk=
`);
  });

  test("should fail on a kubeconfig that is no YAML", () => {
    expect(() => renderRotationBootstrapKubeconfig("a: [", new Uint8Array(), { server: "s", caFile: "c" })).toThrow(
      CredentialsRotationError,
    );
  });
});
