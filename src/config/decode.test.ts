import { describe, expect, test } from "bun:test";
import { decodeConfig } from "./decode.ts";
import { ConfigError } from "./errors.ts";

const get = (obj: unknown, path: string): unknown =>
  path.split(".").reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], obj);

describe("decodeConfig", () => {
  describe("should apply every default to an empty config", () => {
    const empty = decodeConfig("");
    test.each([
      ["logLevel", "info"],
      ["logFormat", "json"],
      ["controllers.operatingSystemConfig.syncPeriod", 600_000],
      ["controllers.token.syncPeriod", 3_600_000],
      ["controllers.systemdUnitCheck.syncPeriod", 60_000],
      ["controllers.systemdUnitCheck.stuckThreshold", 300_000],
      ["server.healthProbes.port", 2751],
      ["server.healthProbes.bindAddress", ""],
      ["server.metrics.port", 2752],
      ["server.metrics.bindAddress", ""],
      ["clientConnection.qps", 50],
      ["clientConnection.burst", 100],
      ["clientConnection.contentType", "application/vnd.kubernetes.protobuf"],
      ["clientConnection.acceptContentTypes", ""],
      ["clientConnection.kubeconfig", ""],
      ["controllers.operatingSystemConfig.secretName", ""],
      ["controllers.operatingSystemConfig.kubernetesVersion", undefined],
      ["controllers.token.syncConfigs", undefined],
      ["apiServer.server", ""],
      ["apiServer.caFile", ""],
      ["bootstrap", undefined],
      ["debugging", undefined],
      ["featureGates", undefined],
    ])("%s defaults to %p", (path, value) => {
      expect(get(empty, path)).toEqual(value);
    });
  });

  describe("should treat the zero values gardenlet writes as unset", () => {
    const zero = decodeConfig(
      'clientConnection: {acceptContentTypes: "", burst: 0, contentType: "", kubeconfig: "", qps: 0}\nlogFormat: ""\nlogLevel: ""\nserver: {healthProbes: {port: 0}}\ncontrollers: {systemdUnitCheck: {}, token: null}\n',
    );
    test.each([
      ["clientConnection.qps", 50],
      ["clientConnection.burst", 100],
      ["clientConnection.contentType", "application/vnd.kubernetes.protobuf"],
      ["logLevel", "info"],
      ["logFormat", "json"],
      ["server.healthProbes.port", 2751],
      ["controllers.token.syncPeriod", 3_600_000],
    ])("%s becomes %p", (path, value) => {
      expect(get(zero, path)).toEqual(value);
    });
  });

  describe("should keep explicit values", () => {
    const explicit = decodeConfig(`
logLevel: foo
logFormat: bar
clientConnection: {kubeconfig: /k, acceptContentTypes: a, contentType: application/json, qps: 1.5, burst: 7}
server:
  healthProbes: {bindAddress: 127.0.0.1, port: 2345}
  metrics: {bindAddress: ::1, port: 7890}
controllers:
  operatingSystemConfig: {syncPeriod: 1s, secretName: s, kubernetesVersion: v1.33}
  token: {syncPeriod: 1s, syncConfigs: [{secretName: t, path: /p}]}
  systemdUnitCheck: {syncPeriod: 1s, stuckThreshold: 1s}
apiServer: {server: https://api, caFile: /ca}
bootstrap: {kubeletDataVolumeSize: 53687091200}
debugging: {enableProfiling: true, enableContentionProfiling: false}
featureGates: {AllAlpha: false}
`);
    test.each([
      ["logLevel", "foo"],
      ["logFormat", "bar"],
      ["clientConnection.kubeconfig", "/k"],
      ["clientConnection.acceptContentTypes", "a"],
      ["clientConnection.contentType", "application/json"],
      ["clientConnection.qps", 1.5],
      ["clientConnection.burst", 7],
      ["server.healthProbes.bindAddress", "127.0.0.1"],
      ["server.healthProbes.port", 2345],
      ["server.metrics.bindAddress", "::1"],
      ["server.metrics.port", 7890],
      ["controllers.operatingSystemConfig.syncPeriod", 1000],
      ["controllers.operatingSystemConfig.secretName", "s"],
      ["controllers.operatingSystemConfig.kubernetesVersion", "1.33.0"],
      ["controllers.token.syncPeriod", 1000],
      ["controllers.token.syncConfigs", [{ secretName: "t", path: "/p" }]],
      ["controllers.systemdUnitCheck.syncPeriod", 1000],
      ["controllers.systemdUnitCheck.stuckThreshold", 1000],
      ["apiServer.server", "https://api"],
      ["apiServer.caFile", "/ca"],
      ["bootstrap.kubeletDataVolumeSize", 53687091200],
      ["debugging.enableProfiling", true],
      ["debugging.enableContentionProfiling", false],
      ["featureGates.AllAlpha", false],
    ])("%s stays %p", (path, value) => {
      expect(get(explicit, path)).toEqual(value);
    });
  });

  test("should accept JSON", () => {
    const c = decodeConfig('{"logLevel":"debug","controllers":{"operatingSystemConfig":{"secretName":"x"}}}');
    expect(c.logLevel).toBe("debug");
    expect(c.controllers.operatingSystemConfig.secretName).toBe("x");
  });

  test("should ignore unknown fields", () => {
    const c = decodeConfig("foo: bar\ncontrollers: {token: {unknown: 1}}\n");
    expect(c).not.toHaveProperty("foo");
    expect(c.controllers.token).toEqual({ syncPeriod: 3_600_000 });
  });

  test.each([
    ["both present", "apiVersion: nodeagent.config.gardener.cloud/v1alpha1\nkind: NodeAgentConfiguration\n"],
    ["kind missing", "apiVersion: nodeagent.config.gardener.cloud/v1alpha1\n"],
    ["apiVersion missing", "kind: NodeAgentConfiguration\n"],
    ["both missing", "logLevel: info\n"],
  ])("should accept the type header when %s", (_, text) => {
    expect(decodeConfig(text).logLevel).toBe("info");
  });

  test.each([
    ["another kind", "kind: Invalid\n"],
    ["another apiVersion", "apiVersion: v1\nkind: NodeAgentConfiguration\n"],
    ["another group", "apiVersion: other.gardener.cloud/v1alpha1\n"],
  ])("should reject %s with a decode error", (_, text) => {
    expect(() => decodeConfig(text, "/c.yaml")).toThrow(/^error decoding config: \/c\.yaml: /);
  });

  test.each([
    ["a duration without unit", "controllers: {token: {syncPeriod: 10}}", "controllers.token.syncPeriod"],
    ["a bad duration", "controllers: {token: {syncPeriod: 1x}}", "controllers.token.syncPeriod"],
    [
      "an empty version",
      'controllers: {operatingSystemConfig: {kubernetesVersion: ""}}',
      "controllers.operatingSystemConfig.kubernetesVersion",
    ],
    [
      "a non-semver version",
      "controllers: {operatingSystemConfig: {kubernetesVersion: foo}}",
      "controllers.operatingSystemConfig.kubernetesVersion",
    ],
    ["a fractional burst", "clientConnection: {burst: 1.5}", "clientConnection.burst"],
    ["a string port", "server: {metrics: {port: abc}}", "server.metrics.port"],
    ["a list for a struct", "controllers: {token: {syncConfigs: {a: 1}}}", "controllers.token.syncConfigs"],
    ["a string size", "bootstrap: {kubeletDataVolumeSize: 50Gi}", "bootstrap.kubeletDataVolumeSize"],
    ["a bad entry", "controllers: {token: {syncConfigs: [{path: /a}, {path: [1]}]}}", "controllers.token.syncConfigs[1].path"],
  ])("should reject %s naming the field", (_, text, path) => {
    let caught: unknown;
    try {
      decodeConfig(text, "/c.yaml");
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const err = caught as ConfigError;
    expect(err.stage).toBe("decode");
    expect(err.issues.map((i) => i.path)).toContain(path);
    expect(err.message).toContain(`${path}: `);
  });

  test("should accept a null kubernetesVersion (validation reports it)", () => {
    expect(
      decodeConfig("controllers: {operatingSystemConfig: {kubernetesVersion: null}}").controllers.operatingSystemConfig.kubernetesVersion,
    ).toBeUndefined();
  });

  test("should read YAML 1.1 booleans", () => {
    expect(decodeConfig("debugging: {enableProfiling: yes}").debugging?.enableProfiling).toBe(true);
  });

  test("should reject an unknown feature gate", () => {
    expect(() => decodeConfig("featureGates: {Foo: true}")).toThrow("unrecognized feature gate: Foo");
  });

  test("should reject invalid YAML with a decode error", () => {
    expect(() => decodeConfig("a: [", "/c.yaml")).toThrow(ConfigError);
  });

  test("should reject a document that is not a mapping", () => {
    expect(() => decodeConfig("- a\n")).toThrow("error decoding config: the document is not a mapping");
  });
});

describe("decodeConfig with bad input", () => {
  const secret = "c2VjcmV0LXRva2VuLTk4NzY1NDMyMTA";
  const failure = (text: string): ConfigError => {
    try {
      decodeConfig(text, "/c.yaml");
    } catch (err) {
      if (err instanceof ConfigError) return err;
      throw err;
    }
    throw new Error("expected a ConfigError");
  };

  test.each([
    [
      "a number for a string (Go's decoder refuses it)",
      "controllers: {operatingSystemConfig: {secretName: 12345}}",
      "controllers.operatingSystemConfig.secretName: invalid type: expected string, got number",
    ],
    ["a boolean for a string", "logLevel: true", "logLevel: invalid type: expected string, got boolean"],
    ["a list for a struct", "apiServer: []", "apiServer: invalid type: expected mapping, got array"],
    ["a list for a map", "featureGates: [AllAlpha]", "featureGates: invalid type: expected mapping, got array"],
    ["a list for an optional struct", "bootstrap: [1]", "bootstrap: invalid type: expected mapping, got array"],
    [
      "a list for a list entry",
      "controllers: {token: {syncConfigs: [[a]]}}",
      "controllers.token.syncConfigs[0]: invalid type: expected mapping, got array",
    ],
    ["a string for a struct", `server: ${secret}`, "server: invalid type: expected object, got string"],
    ["a string for a number", `clientConnection: {qps: ${secret}}`, "clientConnection.qps: invalid type: expected number, got string"],
    ["a bad duration", `controllers: {token: {syncPeriod: ${secret}}}`, "controllers.token.syncPeriod: invalid duration"],
    [
      "a bad version",
      `controllers: {operatingSystemConfig: {kubernetesVersion: ${secret}}}`,
      "controllers.operatingSystemConfig.kubernetesVersion: invalid semantic version",
    ],
    ["another kind", `kind: ${secret}`, 'kind: unexpected value, expected "NodeAgentConfiguration"'],
    [
      "another apiVersion",
      `apiVersion: ${secret}\nkind: ${secret}`,
      'apiVersion: unexpected value, expected "nodeagent.config.gardener.cloud/v1alpha1"',
    ],
  ])("should refuse %s naming the field, never the value", (_what, text, reason) => {
    const err = failure(text);
    expect(err.message).toBe(`error decoding config: /c.yaml: ${reason}`);
    expect(JSON.stringify(err.issues)).not.toContain(secret);
  });

  test.each([
    ["a recursive alias", "controllers: &c {token: *c}", "invalid YAML: a recursive alias (a node that contains itself)"],
    [
      "a recursive alias the yaml package reads",
      "logLevel: yes\ncontrollers: &c {token: *c}",
      "invalid YAML: a recursive alias (a node that contains itself)",
    ],
    [
      "an alias bomb",
      `a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [${"*a, ".repeat(10)}*a]\nc: &c [${"*b, ".repeat(10)}*b]\nd: &d [${"*c, ".repeat(10)}*c]\ne: &e [${"*d, ".repeat(10)}*d]\nf: &f [${"*e, ".repeat(10)}*e]\ng: [${"*f, ".repeat(10)}*f]`,
      "invalid YAML: an alias is unresolvable or expands too often",
    ],
    ["deep nesting", `a: ${"[".repeat(1000)}${"]".repeat(1000)}`, "invalid YAML: nesting deeper than 200 levels"],
    ["a syntax error", `logLevel: "${secret}\nx: [`, "invalid YAML: a closing quote or bracket is missing at line 2, column 5"],
  ])("should refuse %s with a decode error", (_what, text, reason) => {
    expect(failure(text).message).toBe(`error decoding config: /c.yaml: ${reason}`);
  });
});
