import type * as YamlPackage from "yaml";

/**
 * The `yaml` package, evaluated on first use. Imported statically from any module the agent loads,
 * the bundle evaluates it at every start (4-5 ms of start-up CPU, measured in
 * bench/startup.bench.ts), although a start whose texts Bun's native parser reads never calls it.
 * A synchronous require keeps the callers synchronous; the bundler still embeds the package.
 */
export const yamlPackage = (): typeof YamlPackage => require("yaml") as typeof YamlPackage;
