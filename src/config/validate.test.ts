import { describe, expect, test } from "bun:test";
import { decodeConfig } from "./decode.ts";
import { ConfigError, formatFieldIssue } from "./errors.ts";
import type { FieldIssue } from "./errors.ts";
import { validateConfig } from "./validate.ts";

/** Spec §13 baseline: secret osc-secret, v1.33.0, sync periods 1m/1h/1m, stuck 5m, one token config. */
const baseline = (patch = ""): string => `
controllers:
  operatingSystemConfig:
    secretName: osc-secret
    kubernetesVersion: v1.33.0
    syncPeriod: 1m
  token:
    syncPeriod: 1h
    syncConfigs:
    - secretName: gardener-node-agent
      path: /var/lib/gardener-node-agent/credentials/token
  systemdUnitCheck:
    syncPeriod: 1m
    stuckThreshold: 5m
${patch}`;

const issuesOf = (text: string, disableKubernetesVersionCheck = false): Pick<FieldIssue, "path" | "type">[] =>
  validateConfig(decodeConfig(text), { disableKubernetesVersionCheck }).map(({ path, type }) => ({ path, type }));

/** Replaces one line of the baseline (matched by its key and indentation). */
const withLine = (from: string, to: string): string => {
  const text = baseline();
  if (!text.includes(from)) throw new Error(`baseline has no line ${from}`);
  return text.replace(from, to);
};

describe("validateConfig", () => {
  test("should accept the baseline", () => {
    expect(issuesOf(baseline())).toEqual([]);
  });

  test("should accept an empty config once the required fields are set (defaults are valid)", () => {
    expect(issuesOf("controllers: {operatingSystemConfig: {secretName: s, kubernetesVersion: 1.34.1}}")).toEqual([]);
  });

  test.each<[string, string, Pick<FieldIssue, "path" | "type">[]]>([
    ["a negative burst", baseline("clientConnection: {burst: -1}"), [{ path: "clientConnection.burst", type: "Invalid" }]],
    [
      "a null kubernetesVersion",
      withLine("kubernetesVersion: v1.33.0", "kubernetesVersion: null"),
      [{ path: "controllers.operatingSystemConfig.kubernetesVersion", type: "Required" }],
    ],
    [
      "a missing kubernetesVersion",
      withLine("kubernetesVersion: v1.33.0", ""),
      [{ path: "controllers.operatingSystemConfig.kubernetesVersion", type: "Required" }],
    ],
    [
      "an empty secretName",
      withLine("secretName: osc-secret", 'secretName: ""'),
      [{ path: "controllers.operatingSystemConfig.secretName", type: "Required" }],
    ],
    [
      "an OSC syncPeriod of 10s",
      withLine("syncPeriod: 1m\n  token", "syncPeriod: 10s\n  token"),
      [{ path: "controllers.operatingSystemConfig.syncPeriod", type: "Invalid" }],
    ],
    [
      "a second token config without secretName",
      withLine(
        "      path: /var/lib/gardener-node-agent/credentials/token",
        "      path: /var/lib/gardener-node-agent/credentials/token\n    - path: /other",
      ),
      [{ path: "controllers.token.syncConfigs[1].secretName", type: "Required" }],
    ],
    [
      "a second token config without path",
      withLine(
        "      path: /var/lib/gardener-node-agent/credentials/token",
        "      path: /var/lib/gardener-node-agent/credentials/token\n    - secretName: other",
      ),
      [{ path: "controllers.token.syncConfigs[1].path", type: "Required" }],
    ],
    [
      "a second token config with the same path",
      withLine(
        "      path: /var/lib/gardener-node-agent/credentials/token",
        "      path: /var/lib/gardener-node-agent/credentials/token\n    - secretName: other\n      path: /var/lib/gardener-node-agent/credentials/token",
      ),
      [{ path: "controllers.token.syncConfigs[1].path", type: "Duplicate" }],
    ],
    [
      "a token syncPeriod of 10s",
      withLine("syncPeriod: 1h", "syncPeriod: 10s"),
      [{ path: "controllers.token.syncPeriod", type: "Invalid" }],
    ],
    [
      "a systemdUnitCheck syncPeriod of 10s",
      withLine("    syncPeriod: 1m\n    stuckThreshold", "    syncPeriod: 10s\n    stuckThreshold"),
      [{ path: "controllers.systemdUnitCheck.syncPeriod", type: "Invalid" }],
    ],
    [
      "a stuckThreshold of 10s",
      withLine("stuckThreshold: 5m", "stuckThreshold: 10s"),
      [{ path: "controllers.systemdUnitCheck.stuckThreshold", type: "Invalid" }],
    ],
    [
      "an unsupported kubernetesVersion 1.31.0",
      withLine("kubernetesVersion: v1.33.0", "kubernetesVersion: 1.31.0"),
      [{ path: "controllers.operatingSystemConfig.kubernetesVersion", type: "Invalid" }],
    ],
    ["logFormat xml", baseline("logFormat: xml"), [{ path: "logFormat", type: "NotSupported" }]],
    ["logLevel warn", baseline("logLevel: warn"), [{ path: "logLevel", type: "NotSupported" }]],
  ])("should report exactly one issue for %s", (_, text, expected) => {
    expect(issuesOf(text)).toEqual(expected);
  });

  test.each([
    ["a sync period of exactly 15s", withLine("syncPeriod: 1h", "syncPeriod: 15s")],
    ["a stuckThreshold of exactly 30s", withLine("stuckThreshold: 5m", "stuckThreshold: 30s")],
    ["a pre-release of a supported minor", withLine("kubernetesVersion: v1.33.0", "kubernetesVersion: v1.36.2-rc.1")],
    ["a burst of 0 (defaulted)", baseline("clientConnection: {burst: 0}")],
    ["an empty logLevel and logFormat", baseline('logLevel: ""\nlogFormat: ""')],
    ["logLevel debug and logFormat text", baseline("logLevel: debug\nlogFormat: text")],
  ])("should accept %s", (_, text) => {
    expect(issuesOf(text)).toEqual([]);
  });

  test("should accept an unsupported version when the check is disabled", () => {
    expect(issuesOf(withLine("kubernetesVersion: v1.33.0", "kubernetesVersion: 1.31.0"), true)).toEqual([]);
  });

  test("should collect several issues at once", () => {
    expect(issuesOf('clientConnection: {burst: -1}\nlogFormat: xml\ncontrollers: {operatingSystemConfig: {secretName: ""}}')).toEqual([
      { path: "clientConnection.burst", type: "Invalid" },
      { path: "logFormat", type: "NotSupported" },
      { path: "controllers.operatingSystemConfig.secretName", type: "Required" },
      { path: "controllers.operatingSystemConfig.kubernetesVersion", type: "Required" },
    ]);
  });
});

describe("formatFieldIssue", () => {
  test.each<[FieldIssue, string]>([
    [
      {
        path: "controllers.operatingSystemConfig.secretName",
        type: "Required",
        detail: "must provide the secret name for the operating system config",
      },
      "controllers.operatingSystemConfig.secretName: Required value: must provide the secret name for the operating system config",
    ],
    [
      { path: "clientConnection.burst", type: "Invalid", detail: "must be non-negative" },
      "clientConnection.burst: Invalid value: must be non-negative",
    ],
    [{ path: "a[1].path", type: "Duplicate", detail: "" }, "a[1].path: Duplicate value"],
    [
      { path: "logFormat", type: "NotSupported", detail: 'supported values: "json", "text"' },
      'logFormat: Unsupported value: supported values: "json", "text"',
    ],
  ])("should print %o like Kubernetes, without the value", (issue, text) => {
    expect(formatFieldIssue(issue)).toBe(text);
  });

  test("should name the file and every field in a ConfigError", () => {
    const issues = validateConfig(decodeConfig("clientConnection: {burst: -1}"));
    expect(ConfigError.invalid("/etc/c.yaml", issues).message).toBe(
      "invalid config: /etc/c.yaml: [clientConnection.burst: Invalid value: must be non-negative, " +
        "controllers.operatingSystemConfig.secretName: Required value: must provide the secret name for the operating system config, " +
        "controllers.operatingSystemConfig.kubernetesVersion: Required value: must provide a supported kubernetes version]",
    );
  });
});

describe("validateConfig of what the Go agent only finds at run time", () => {
  test.each([
    ["an IPv4 listener", "server: {healthProbes: {bindAddress: 127.0.0.1}}"],
    ["an IPv6 listener", "server: {metrics: {bindAddress: '::1'}}"],
    ["a host name listener", "server: {metrics: {bindAddress: localhost}}"],
    ["a qualified host name listener", "server: {metrics: {bindAddress: node-1.eu-west-1.compute.internal}}"],
    ["a host name with digits in the first labels", "server: {metrics: {bindAddress: 10-0-0-1.nodes.example}}"],
    ["the highest port", "server: {metrics: {port: 65535}}"],
    ["an absolute kubeconfig", "clientConnection: {kubeconfig: /etc/kubeconfig}"],
  ])("should accept %s", (_what, patch) => {
    expect(issuesOf(baseline(patch))).toEqual([]);
  });

  test.each([
    [
      "a bind address with a port",
      "server: {healthProbes: {bindAddress: '127.0.0.1:80'}}",
      "server.healthProbes.bindAddress: Invalid value: must be empty, an IP address (e.g. 0.0.0.0, 127.0.0.1, ::) or a host name whose last label starts with a letter",
    ],
    [
      "a bind address with spaces",
      "server: {metrics: {bindAddress: 'a b'}}",
      "server.metrics.bindAddress: Invalid value: must be empty, an IP address (e.g. 0.0.0.0, 127.0.0.1, ::) or a host name whose last label starts with a letter",
    ],
    [
      "a port above 65535",
      "server: {metrics: {port: 70000}}",
      "server.metrics.port: Invalid value: must be between 0 and 65535, inclusive",
    ],
    [
      "a negative port",
      "server: {healthProbes: {port: -1}}",
      "server.healthProbes.port: Invalid value: must be between 0 and 65535, inclusive",
    ],
    [
      "a relative kubeconfig path",
      "clientConnection: {kubeconfig: kubeconfig}",
      "clientConnection.kubeconfig: Invalid value: must be an absolute path",
    ],
  ])("should refuse %s", (_what, patch, message) => {
    expect(validateConfig(decodeConfig(baseline(patch))).map(formatFieldIssue)).toEqual([message]);
  });

  test.each(["0o777", "999.1.1.1", "10.0.0", "1.2.3.4.5", "256.0.0.1", "0x7f.1", "127.1"])(
    "should refuse the address-shaped host name %s, which only fails when the listener resolves it",
    (address) => {
      expect(issuesOf(baseline(`server: {metrics: {bindAddress: '${address}'}}`))).toEqual([
        { path: "server.metrics.bindAddress", type: "Invalid" },
      ]);
    },
  );
});

describe("validateConfig messages", () => {
  test.each([
    ["logLevel", `logLevel: ${"x".repeat(10_000)}`, 'logLevel: Unsupported value: supported values: "debug", "info", "error"'],
    ["logFormat", `logFormat: ${"y".repeat(10_000)}`, 'logFormat: Unsupported value: supported values: "json", "text"'],
    [
      "kubernetesVersion",
      "",
      "controllers.operatingSystemConfig.kubernetesVersion: Invalid value: unsupported kubernetes version, supported minors: 1.32, 1.33, 1.34, 1.35, 1.36",
    ],
  ])("should name %s and the expected form, never the value", (_field, patch, message) => {
    const text = baseline(patch).replace(
      "kubernetesVersion: v1.33.0",
      patch === "" ? `kubernetesVersion: v1.31.${"9".repeat(100)}` : "kubernetesVersion: v1.33.0",
    );
    const messages = validateConfig(decodeConfig(text)).map(formatFieldIssue);
    expect(messages).toEqual([message]);
    expect(messages.join("")).not.toMatch(/xxxx|yyyy|9999/);
  });
});
