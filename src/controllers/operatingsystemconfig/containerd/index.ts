export { certsDir, configVersion, parseContainerdVersion, patchContainerdConfig } from "./config-toml.ts";
export { configTomlPath, configureContainerd, containerdDirs, registryDir, writeHostsToml } from "./configure.ts";
export { envDropInContent, envDropInName, injectEnvDropIn } from "./env-dropin.ts";
export { ContainerdConfigError } from "./errors.ts";
export { goJsonList, goQuote, hostsToml } from "./hosts-toml.ts";
export { ContainerdCommandError, type ContainerdInfo, createContainerdInfo } from "./info.ts";
export { type ProbeDeps, type ProbeFetch, probeRegistry } from "./probe.ts";
