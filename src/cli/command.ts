/**
 * The contract every sub-command implements. A command module (`src/cli/<name>.ts`) exports
 * `export const command: Command`. Keep its top-level imports light: import kube/dbus/ffi modules
 * inside `run` with `await import(...)`, so `--help` and `--version` stay fast.
 *
 * Shared start-up helpers for commands live in `./startup.ts`:
 *   `loadCommandConfig(ctx)` → `{ config, path, warnings }` (throws ConfigError; honours --root/--config-dir
 *   and EXPERIMENTAL_DISABLE_KUBERNETES_VERSION_CHECK), and
 *   `startCommandLogger(ctx, config, runName)` → Logger (logs `Starting <runName>` and the `FLAG:` lines).
 */

/** Where a command prints; the CLI passes process stdout/stderr, tests pass buffers. */
export interface Writer {
  /** Text, or bytes (`render --format gzip`). */
  write(data: string | Uint8Array): void;
}

export type FlagKind = "string" | "bool";

export interface FlagSpec {
  /** Long name without dashes: `config-dir`. */
  readonly name: string;
  /** One-letter alias without dash: `h`. */
  readonly short?: string;
  readonly kind: FlagKind;
  /** Value when the flag is absent; bool flags use "true"/"false". */
  readonly default: string;
  readonly usage: string;
  /**
   * A bare argument fills this flag (at most one flag of a command has it): `render osc.yaml` is
   * `render --osc osc.yaml`. The Go agent's own commands take no positional arguments.
   */
  readonly positional?: boolean;
}

export interface CommandContext {
  /** The command being run: "run" for the default command, else its name. */
  readonly command: string;
  /**
   * Every flag of the command (common flags and its own) with defaults applied.
   * Bool flags are "true"/"false". Keys are long names without dashes.
   */
  readonly flags: Readonly<Record<string, string>>;
  /** Names of the flags given on the command line (for `FLAG:` start-up lines and "was it set?"). */
  readonly explicitFlags: ReadonlySet<string>;
  /** `--root`: every host path is resolved under it ("/" in production). */
  readonly root: string;
  /** `--config-dir`, a host path (resolve it under `root`). */
  readonly configDir: string;
  /** A snapshot of the process environment; commands read env only from here. */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdout: Writer;
  readonly stderr: Writer;
  /** Aborted on SIGTERM/SIGINT. */
  readonly signal: AbortSignal;
  readonly version: string;
  readonly revision: string;
}

export interface Command {
  readonly name: string;
  /** One line for the command list in `--help`. */
  readonly summary: string;
  /** Usage text after the synopsis line (may be several lines). */
  readonly usage: string;
  /** The command's own flags; the common flags (config-dir, root, log-level, log-format, version, help) are added by the CLI. */
  readonly flags: readonly FlagSpec[];
  /**
   * Returns the exit code. Throw `ConfigError` (exit 1, message printed), `UsageError` (exit 2) or
   * `RestartRequested` (exit 0); any other error prints one line and exits 1.
   */
  run(ctx: CommandContext): Promise<number>;
}
