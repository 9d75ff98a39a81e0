export { certsDir } from "./config-toml.ts";
export { configTomlPath, configureContainerd, registryDir, writeHostsToml } from "./configure.ts";
export { type ContainerdInfo, createContainerdInfo } from "./info.ts";
export { hostsToml } from "./hosts-toml.ts";
export { type ProbeFetch, probeRegistry } from "./probe.ts";
