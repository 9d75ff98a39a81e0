import type { APIServerConfiguration } from "./configuration.ts";
import { decodeConfig } from "./decode.ts";
import { ConfigError } from "./errors.ts";
import { readConfigFile } from "./load.ts";
import type { ConfigReader } from "./load.ts";

/** Where the connectivity probe reads its config: upstream ignores --config-dir here (spec §6.4). */
const defaultConfigDir = "/var/lib/gardener-node-agent";

export type ApiServerConfigStage = "read" | "decode";

/** The API-server config reader failed; messages carry upstream's prefixes. */
export class ApiServerConfigError extends Error {
  override readonly name = "ApiServerConfigError";
  constructor(
    readonly stage: ApiServerConfigStage,
    options: ErrorOptions & { cause: ConfigError },
  ) {
    super(`error ${stage === "read" ? "reading" : "decoding"} gardener-node-agent config: ${options.cause.message}`, options);
  }
}

export interface ReadApiServerConfigOptions {
  readonly fs: ConfigReader;
  readonly version: string;
  /** Defaults to /var/lib/gardener-node-agent. */
  readonly configDir?: string;
}

/**
 * `apiServer` (server URL and CA file) of the agent's config, decoded but not validated — what the
 * bootstrap connectivity probe needs. Throws ApiServerConfigError.
 */
export const readApiServerConfig = async (o: ReadApiServerConfigOptions): Promise<APIServerConfiguration> => {
  const configDir = o.configDir ?? defaultConfigDir;
  let file: { path: string; text: string };
  try {
    file = await readConfigFile({ fs: o.fs, configDir, version: o.version });
  } catch (err) {
    if (err instanceof ConfigError) throw new ApiServerConfigError("read", { cause: err });
    throw err;
  }
  try {
    return decodeConfig(file.text, file.path).apiServer;
  } catch (err) {
    if (err instanceof ConfigError) throw new ApiServerConfigError("decode", { cause: err });
    throw err;
  }
};
