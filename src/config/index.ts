export { ApiServerConfigError, defaultConfigDir, readApiServerConfig } from "./api-server.ts";
export type { ApiServerConfigStage, ReadApiServerConfigOptions } from "./api-server.ts";
export { clientConnectionSchema } from "./client-connection.ts";
export type { ClientConnectionConfiguration } from "./client-connection.ts";
export {
  apiServerSchema,
  bootstrapSchema,
  configApiVersion,
  configKind,
  debuggingSchema,
  nodeAgentConfigurationSchema,
} from "./configuration.ts";
export type {
  APIServerConfiguration,
  BootstrapConfiguration,
  DebuggingConfiguration,
  NodeAgentConfiguration,
} from "./configuration.ts";
export {
  controllersSchema,
  operatingSystemConfigControllerSchema,
  systemdUnitCheckControllerSchema,
  tokenControllerSchema,
  tokenSyncConfigSchema,
} from "./controllers.ts";
export type {
  ControllerConfiguration,
  OperatingSystemConfigControllerConfig,
  SystemdUnitCheckControllerConfig,
  TokenControllerConfig,
  TokenSyncConfig,
} from "./controllers.ts";
export { decodeConfig, knownFeatureGates } from "./decode.ts";
export { DurationError, formatDuration, formatDurationNs, parseDuration, parseDurationNs } from "./duration.ts";
export { configToDocument, encodeConfig } from "./encode.ts";
export { ConfigError, formatFieldIssue } from "./errors.ts";
export type { ConfigErrorStage, FieldIssue, FieldIssueType } from "./errors.ts";
export { configFileName, loadConfig, readConfigFile } from "./load.ts";
export type { ConfigFile, ConfigReader, LoadConfigOptions, LoadedConfig } from "./load.ts";
export {
  canonicalSemVer,
  formatSemVer,
  isSupportedKubernetesVersion,
  parseSemVer,
  SemVerError,
  supportedKubernetesMinors,
} from "./semver.ts";
export type { SemVer } from "./semver.ts";
export { serverSchema } from "./server.ts";
export type { ServerConfiguration } from "./server.ts";
export { logFormats, logLevels, validateConfig } from "./validate.ts";
export type { ValidateOptions } from "./validate.ts";
export { parseYaml, YamlSyntaxError } from "./yaml.ts";
export type { YamlVersion } from "./yaml.ts";
export { unsafeStructure, yamlErrorText } from "./yaml-checks.ts";
