import { loadConfig, logFormats, logLevels } from "../config/index.ts";
import type { LoadedConfig } from "../config/index.ts";
import { createHostFs } from "../host/index.ts";
import { createLogger, createStreamSink } from "../log/index.ts";
import type { Logger, LogFormat, LogLevel, LogSink } from "../log/index.ts";
import type { CommandContext } from "./command.ts";
import { UsageError } from "./errors.ts";

/**
 * Reads `<root>/<config-dir>/config-<version>.yaml` (or the single candidate), decoded and validated.
 * Throws ConfigError.
 */
export const loadCommandConfig = (ctx: CommandContext): Promise<LoadedConfig> =>
  loadConfig({
    fs: createHostFs(ctx.root),
    configDir: ctx.configDir,
    version: ctx.version,
    disableKubernetesVersionCheck: ctx.env["EXPERIMENTAL_DISABLE_KUBERNETES_VERSION_CHECK"] === "true",
  });

const pick = <T extends string>(flag: string | undefined, fromConfig: string, allowed: readonly string[], name: string, fallback: T): T => {
  if (flag !== undefined && flag !== "") {
    if (!allowed.includes(flag))
      throw new UsageError(`invalid argument ${JSON.stringify(flag)} for --${name} (supported: ${allowed.join(", ")})`);
    return flag as T;
  }
  return (fromConfig === "" ? fallback : fromConfig) as T;
};

/** Level and format: the flag wins over the config; both were validated. */
export const logSettings = (ctx: CommandContext, loaded: LoadedConfig): { level: LogLevel; format: LogFormat } => ({
  level: pick<LogLevel>(ctx.flags["log-level"], loaded.config.logLevel, logLevels, "log-level", "info"),
  format: pick<LogFormat>(ctx.flags["log-format"], loaded.config.logFormat, logFormats, "log-format", "json"),
});

/**
 * Where log records go: journald's native protocol when systemd connected stdout to the journal
 * (JOURNAL_STREAM) and journald is reachable; `<N>`-prefixed stdout under systemd without journald;
 * plain stdout otherwise. libsystemd is loaded only in the first case. `journalSocket` (journald's
 * socket by default) lets a test decide whether journald is reachable.
 */
export const createCommandSink = async (ctx: CommandContext, format: LogFormat, journalSocket?: string): Promise<LogSink> => {
  const underSystemd = (ctx.env["JOURNAL_STREAM"] ?? "") !== "";
  if (!underSystemd) return createStreamSink(ctx.stdout, format);
  const { createJournalSink, openJournal } = await import("../systemd/journal.ts");
  return createJournalSink({ lib: await openJournal(journalSocket), fallback: ctx.stdout, format });
};

/** `FLAG: --name="value"` for every flag, like Kubernetes components print at start-up. */
export const flagLines = (ctx: CommandContext): string[] =>
  Object.keys(ctx.flags)
    .sort()
    .map((name) => `FLAG: --${name}=${JSON.stringify(ctx.flags[name] ?? "")}`);

/**
 * Builds the command's logger and logs `Starting <runName>` with the version, one `FLAG:` line per
 * flag, and the loader's warnings (e.g. the single-candidate config fallback).
 */
export const startCommandLogger = async (ctx: CommandContext, loaded: LoadedConfig, runName: string): Promise<Logger> => {
  const { level, format } = logSettings(ctx, loaded);
  const log = createLogger({ level, sink: await createCommandSink(ctx, format), fields: { logger: runName } });
  log.info(`Starting ${runName}`, { version: ctx.version });
  for (const line of flagLines(ctx)) log.info(line);
  for (const warning of loaded.warnings) log.warn(warning, { path: loaded.path });
  return log;
};
