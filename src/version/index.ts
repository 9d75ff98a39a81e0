import pkg from "../../package.json" with { type: "json" };

declare const GNA_BUILD_VERSION: string | undefined;
declare const GNA_BUILD_REVISION: string | undefined;

/**
 * The build's version (stamped by `bun build --define GNA_BUILD_VERSION=...`); falls back to
 * package.json when running from source. It names the config file: config-<version>.yaml.
 */
export const version: string = typeof GNA_BUILD_VERSION === "string" && GNA_BUILD_VERSION !== "" ? GNA_BUILD_VERSION : `v${pkg.version}`;

export const revision: string = typeof GNA_BUILD_REVISION === "string" && GNA_BUILD_REVISION !== "" ? GNA_BUILD_REVISION : "unknown";

export const programName = "gardener-node-agent";
