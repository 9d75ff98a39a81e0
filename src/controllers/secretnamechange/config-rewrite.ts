import { configToDocument, decodeConfig, encodeConfig } from "../../config/index.ts";

/** The config file's text with `controllers.operatingSystemConfig.secretName` replaced. */
export interface Rewrite {
  /** The secret name the file names now. */
  readonly current: string;
  /** The whole file re-encoded with the new name; undefined when it already names it. */
  readonly text: string | undefined;
}

const sortKeys = (x: unknown): unknown => {
  if (Array.isArray(x)) return x.map(sortKeys);
  if (typeof x !== "object" || x === null) return x;
  return Object.fromEntries(
    Object.keys(x)
      .sort()
      .map((k) => [k, sortKeys((x as Record<string, unknown>)[k])]),
  );
};

/**
 * Decodes the config (defaults applied, like upstream) and re-encodes the whole of it with the new
 * secret name, keys sorted, in the format the file had: JSON stays JSON, anything else becomes YAML.
 * Throws ConfigError when the file does not decode.
 */
export function rewriteSecretName(fileText: string, path: string, secretName: string): Rewrite {
  const config = decodeConfig(fileText, path);
  const current = config.controllers.operatingSystemConfig.secretName;
  if (current === secretName) return { current, text: undefined };
  const next = {
    ...config,
    controllers: { ...config.controllers, operatingSystemConfig: { ...config.controllers.operatingSystemConfig, secretName } },
  };
  const text = fileText.trimStart().startsWith("{") ? `${JSON.stringify(sortKeys(configToDocument(next)), null, 2)}\n` : encodeConfig(next);
  return { current, text };
}
