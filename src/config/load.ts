import type { NodeAgentConfiguration } from "./configuration.ts";
import { decodeConfig } from "./decode.ts";
import { ConfigError } from "./errors.ts";
import { validateConfig } from "./validate.ts";
import { errorText } from "../log/index.ts";

/** The two file operations the loader needs (a HostFs satisfies it). */
export interface ConfigReader {
  readText(path: string): Promise<string | undefined>;
  list(path: string): Promise<string[] | undefined>;
}

export interface LoadConfigOptions {
  readonly fs: ConfigReader;
  /** Host path of the config dir, e.g. /var/lib/gardener-node-agent. */
  readonly configDir: string;
  /** The build's version: the file read is `config-<version>.yaml`. */
  readonly version: string;
  readonly disableKubernetesVersionCheck?: boolean;
}

export interface LoadedConfig {
  readonly config: NodeAgentConfiguration;
  /** Host path of the file actually read. */
  readonly path: string;
  /** Things to log once a logger exists (e.g. a single-candidate fallback). */
  readonly warnings: readonly string[];
}

const configFileName = (version: string): string => `config-${version}.yaml`;

const CANDIDATE = /^config-.+\.yaml$/;

const join = (dir: string, name: string): string => `${dir.replace(/\/+$/, "")}/${name}`;

const readOrThrow = async (fs: ConfigReader, path: string, what: "file" | "dir"): Promise<string | string[] | undefined> => {
  try {
    return what === "file" ? await fs.readText(path) : await fs.list(path);
  } catch (err) {
    throw new ConfigError("read", path, [], errorText(err), { cause: err });
  }
};

export interface ConfigFile {
  readonly path: string;
  readonly text: string;
  readonly warnings: readonly string[];
}

/**
 * Picks and reads the file: `config-<version>.yaml`, else the only `config-*.yaml` (with a warning).
 * Throws ConfigError (stage "read").
 */
export const readConfigFile = async (o: Omit<LoadConfigOptions, "disableKubernetesVersionCheck">): Promise<ConfigFile> => {
  const wanted = join(o.configDir, configFileName(o.version));
  const text = await readOrThrow(o.fs, wanted, "file");
  if (typeof text === "string") return { path: wanted, text, warnings: [] };

  const names = ((await readOrThrow(o.fs, o.configDir, "dir")) as string[] | undefined) ?? [];
  const candidates = names.filter((n) => CANDIDATE.test(n)).sort();
  const only = candidates.length === 1 ? candidates[0] : undefined;
  if (only !== undefined) {
    const path = join(o.configDir, only);
    const fallback = await readOrThrow(o.fs, path, "file");
    if (typeof fallback === "string") {
      return {
        path,
        text: fallback,
        warnings: [`Config file ${configFileName(o.version)} not found, using the only candidate ${path}`],
      };
    }
  }
  const listed = candidates.length > 1 ? ` (candidates: ${candidates.join(", ")}; none matches version ${o.version})` : "";
  throw new ConfigError("read", wanted, [], `no such file or directory${listed}`);
};

/** Reads, decodes (defaults applied) and validates the agent's config. Throws ConfigError. */
export const loadConfig = async (o: LoadConfigOptions): Promise<LoadedConfig> => {
  if (o.configDir === "") throw new ConfigError("read", undefined, [], "missing config dir");
  const { path, text, warnings } = await readConfigFile(o);
  const config = decodeConfig(text, path);
  const options = o.disableKubernetesVersionCheck === undefined ? {} : { disableKubernetesVersionCheck: o.disableKubernetesVersionCheck };
  const issues = validateConfig(config, options);
  if (issues.length > 0) throw ConfigError.invalid(path, issues);
  return { config, path, warnings };
};
