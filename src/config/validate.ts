import type { NodeAgentConfiguration } from "./configuration.ts";
import { formatDuration } from "./duration.ts";
import { isIpLiteral } from "./ip-literal.ts";
import type { FieldIssue } from "./errors.ts";
import { isSupportedKubernetesVersion, supportedKubernetesMinorsText } from "./semver.ts";

export interface ValidateOptions {
  /** EXPERIMENTAL_DISABLE_KUBERNETES_VERSION_CHECK=true: accept any Kubernetes minor. */
  readonly disableKubernetesVersionCheck?: boolean;
}

export const logLevels: readonly string[] = ["debug", "info", "error"];
export const logFormats: readonly string[] = ["json", "text"];

const MIN_SYNC_PERIOD_MS = 15_000;
const MIN_STUCK_THRESHOLD_MS = 30_000;

const supported = (values: readonly string[]) => `supported values: ${values.map((x) => JSON.stringify(x)).join(", ")}`;

const atLeast = (path: string, ms: number | undefined, minMs: number): FieldIssue[] =>
  ms === undefined || ms < minMs
    ? [
        {
          path,
          type: "Invalid",
          detail: `must be a duration of at least ${formatDuration(minMs)}`,
        },
      ]
    : [];

const validateTokenSyncConfigs = (config: NodeAgentConfiguration): FieldIssue[] => {
  const issues: FieldIssue[] = [];
  const seen = new Set<string>();
  (config.controllers.token.syncConfigs ?? []).forEach((sc, i) => {
    const base = `controllers.token.syncConfigs[${i}]`;
    if (sc.secretName === "") {
      issues.push({ path: `${base}.secretName`, type: "Required", detail: "must provide the secret name for the access token" });
    }
    if (sc.path === "") {
      issues.push({ path: `${base}.path`, type: "Required", detail: "must provide the path where the token should be synced to" });
    } else {
      if (seen.has(sc.path)) {
        issues.push({ path: `${base}.path`, type: "Duplicate", detail: "must differ from the path of every other sync config" });
      }
      seen.add(sc.path);
    }
  });
  return issues;
};

/**
 * A DNS name (RFC 1123 labels) whose last label starts with a letter, as a listener's host may be. A
 * last label starting with a digit is a mistyped address, never a name (`999.1.1.1`, `0o777`, `10.0.0`;
 * RFC 3696 §2: top-level names are not all-numeric), and would only fail when the listener resolves it.
 */
const HOSTNAME = /^(?=.{1,253}$)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/**
 * What the Go agent only finds when it starts listening or loading: a listener address that is not
 * an IP or host name, a port outside 0–65535, a relative kubeconfig path. Checked here so a bad
 * config fails at once with the field named, before anything starts.
 */
const validateRuntimeFields = (config: NodeAgentConfiguration): FieldIssue[] => {
  const issues: FieldIssue[] = [];
  for (const name of ["healthProbes", "metrics"] as const) {
    const { bindAddress, port } = config.server[name];
    if (bindAddress !== "" && !isIpLiteral(bindAddress) && !HOSTNAME.test(bindAddress)) {
      issues.push({
        path: `server.${name}.bindAddress`,
        type: "Invalid",
        detail: "must be empty, an IP address (e.g. 0.0.0.0, 127.0.0.1, ::) or a host name whose last label starts with a letter",
      });
    }
    if (port < 0 || port > 65535) {
      issues.push({ path: `server.${name}.port`, type: "Invalid", detail: "must be between 0 and 65535, inclusive" });
    }
  }
  const kubeconfig = config.clientConnection.kubeconfig;
  if (kubeconfig !== "" && !kubeconfig.startsWith("/")) {
    issues.push({ path: "clientConnection.kubeconfig", type: "Invalid", detail: "must be an absolute path" });
  }
  return issues;
};

/**
 * Every rule of the Go agent's ValidateNodeAgentConfiguration, on a decoded (defaulted) config, plus
 * the checks the Go agent leaves to run time (validateRuntimeFields).
 */
export const validateConfig = (config: NodeAgentConfiguration, options: ValidateOptions = {}): FieldIssue[] => {
  const issues: FieldIssue[] = [];
  const { clientConnection, controllers } = config;
  if (clientConnection.burst < 0) {
    issues.push({ path: "clientConnection.burst", type: "Invalid", detail: "must be non-negative" });
  }
  if (config.logLevel !== "" && !logLevels.includes(config.logLevel)) {
    issues.push({ path: "logLevel", type: "NotSupported", detail: supported(logLevels) });
  }
  if (config.logFormat !== "" && !logFormats.includes(config.logFormat)) {
    issues.push({ path: "logFormat", type: "NotSupported", detail: supported(logFormats) });
  }

  const osc = controllers.operatingSystemConfig;
  if (osc.secretName === "") {
    issues.push({
      path: "controllers.operatingSystemConfig.secretName",
      type: "Required",
      detail: "must provide the secret name for the operating system config",
    });
  }
  issues.push(...atLeast("controllers.operatingSystemConfig.syncPeriod", osc.syncPeriod, MIN_SYNC_PERIOD_MS));
  if (osc.kubernetesVersion === undefined) {
    issues.push({
      path: "controllers.operatingSystemConfig.kubernetesVersion",
      type: "Required",
      detail: "must provide a supported kubernetes version",
    });
  } else if (options.disableKubernetesVersionCheck !== true && !isSupportedKubernetesVersion(osc.kubernetesVersion)) {
    issues.push({
      path: "controllers.operatingSystemConfig.kubernetesVersion",
      type: "Invalid",
      detail: `unsupported kubernetes version, supported minors: ${supportedKubernetesMinorsText}`,
    });
  }

  if (osc.stagingMaxBytes !== undefined && osc.stagingMaxBytes <= 0) {
    issues.push({
      path: "controllers.operatingSystemConfig.stagingMaxBytes",
      type: "Invalid",
      detail: "must be a positive number of bytes",
    });
  }

  issues.push(...validateTokenSyncConfigs(config));
  issues.push(...atLeast("controllers.token.syncPeriod", controllers.token.syncPeriod, MIN_SYNC_PERIOD_MS));

  const unitCheck = controllers.systemdUnitCheck;
  issues.push(...atLeast("controllers.systemdUnitCheck.syncPeriod", unitCheck.syncPeriod, MIN_SYNC_PERIOD_MS));
  if (unitCheck.stuckThreshold !== undefined) {
    issues.push(...atLeast("controllers.systemdUnitCheck.stuckThreshold", unitCheck.stuckThreshold, MIN_STUCK_THRESHOLD_MS));
  }
  issues.push(...validateRuntimeFields(config));
  return issues;
};
