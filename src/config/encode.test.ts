import { describe, expect, test } from "bun:test";
import { decodeConfig } from "./decode.ts";
import { encodeConfig } from "./encode.ts";

const full = `
apiVersion: nodeagent.config.gardener.cloud/v1alpha1
kind: NodeAgentConfiguration
logLevel: debug
logFormat: text
clientConnection: {kubeconfig: /k, acceptContentTypes: a, contentType: application/json, qps: 1.5, burst: 7}
server:
  healthProbes: {bindAddress: 127.0.0.1, port: 2345}
  metrics: {bindAddress: "::1", port: 7890}
controllers:
  operatingSystemConfig: {syncPeriod: 90s, secretName: s, kubernetesVersion: v1.33}
  token: {syncPeriod: 12h, syncConfigs: [{secretName: t, path: /p}, {secretName: "on", path: "0644"}]}
  systemdUnitCheck: {syncPeriod: 1m, stuckThreshold: 1500ms}
apiServer: {server: https://api, caFile: /ca}
bootstrap: {kubeletDataVolumeSize: 53687091200}
debugging: {enableProfiling: true}
featureGates: {AllBeta: true}
`;

describe("encodeConfig", () => {
  test("should round-trip every field", () => {
    const decoded = decodeConfig(full);
    expect(decodeConfig(encodeConfig(decoded))).toEqual(decoded);
  });

  test("should write sorted keys, canonical durations and versions, and explicit defaults", () => {
    const text = encodeConfig(
      decodeConfig(
        "controllers: {operatingSystemConfig: {secretName: osc, kubernetesVersion: v1.33}, token: {syncPeriod: 720m}}\nbootstrap: {}",
      ),
    );
    expect(text).toBe(`apiServer:
  caFile: ""
  server: ""
apiVersion: nodeagent.config.gardener.cloud/v1alpha1
bootstrap: {}
clientConnection:
  acceptContentTypes: ""
  burst: 100
  contentType: application/vnd.kubernetes.protobuf
  kubeconfig: ""
  qps: 50
controllers:
  operatingSystemConfig:
    kubernetesVersion: 1.33.0
    secretName: osc
    syncPeriod: 10m0s
  systemdUnitCheck:
    stuckThreshold: 5m0s
    syncPeriod: 1m0s
  token:
    syncPeriod: 12h0m0s
kind: NodeAgentConfiguration
logFormat: json
logLevel: info
server:
  healthProbes:
    bindAddress: ""
    port: 2751
  metrics:
    bindAddress: ""
    port: 2752
`);
  });

  test("should quote strings YAML 1.1 would read as other types", () => {
    const text = encodeConfig(decodeConfig(full));
    expect(text).toContain('secretName: "on"');
    expect(text).toContain('path: "0644"');
  });
});
