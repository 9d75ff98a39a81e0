import { ConfigError } from "../config/errors.ts";
import { RestartRequested } from "../kube/reconcile.ts";
import { errorText } from "../log/error-text.ts";
import { machineArch } from "../registry/platform.ts";
import type { Command, CommandContext, Writer } from "./command.ts";
import { runEntry, subcommands } from "./commands.ts";
import type { CommandEntry } from "./commands.ts";
import { UsageError } from "./errors.ts";
import { commonFlags, parseFlags } from "./flags.ts";
import { helpText } from "./help.ts";

export interface CliIo {
  readonly stdout: Writer;
  readonly stderr: Writer;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Aborted on SIGTERM/SIGINT. */
  readonly signal: AbortSignal;
  readonly program: string;
  readonly version: string;
  readonly revision: string;
}

/** The commands the CLI knows; tests pass their own. */
export interface CommandRegistry {
  readonly run: CommandEntry;
  readonly subcommands: readonly CommandEntry[];
}

const defaultRegistry: CommandRegistry = { run: runEntry, subcommands };

const rawVersion = (io: CliIo): string =>
  `version.Info{GitVersion:${JSON.stringify(io.version)}, GitCommit:${JSON.stringify(io.revision)}, ` +
  `Compiler:"bun", BunVersion:${JSON.stringify(Bun.version)}, Platform:"${process.platform}/${machineArch()}"}`;

/**
 * The edge of the program: picks the command, parses flags, runs it, and turns every outcome into an
 * exit code. Usage errors → one line + 2; config errors → their message + 1; a requested restart or a
 * signal-driven stop → 0; anything else → one line + 1. Never prints a stack.
 */
export const runCli = async (argv: readonly string[], io: CliIo, registry: CommandRegistry = defaultRegistry): Promise<number> => {
  let helpHint = io.program;
  try {
    const first = argv[0];
    let entry = registry.run;
    let rest = argv;
    if (first !== undefined && !first.startsWith("-")) {
      const found = registry.subcommands.find((c) => c.name === first);
      if (found === undefined) throw new UsageError(`unknown command ${JSON.stringify(first)} for ${JSON.stringify(io.program)}`);
      entry = found;
      rest = argv.slice(1);
      helpHint = `${io.program} ${found.name}`;
    }
    const cmd: Command = await entry.load();
    const specs = [...cmd.flags, ...commonFlags];
    const parsed = parseFlags(rest, specs);
    if (parsed.values["help"] === "true") {
      io.stdout.write(helpText(io.program, cmd, specs, entry === registry.run ? registry.subcommands : undefined));
      return 0;
    }
    const versionFlag = parsed.values["version"] ?? "false";
    if (versionFlag !== "false") {
      io.stdout.write(versionFlag === "raw" ? `${rawVersion(io)}\n` : `${io.program} ${io.version}\n`);
      return 0;
    }
    const ctx: CommandContext = {
      command: cmd.name,
      flags: parsed.values,
      explicitFlags: parsed.explicit,
      root: parsed.values["root"] ?? "/",
      configDir: parsed.values["config-dir"] ?? "",
      env: io.env,
      stdout: io.stdout,
      stderr: io.stderr,
      signal: io.signal,
      version: io.version,
      revision: io.revision,
    };
    return await cmd.run(ctx);
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`error: ${err.message} (see '${helpHint} --help')\n`);
      return 2;
    }
    if (err instanceof RestartRequested) return 0;
    if (io.signal.aborted && err === io.signal.reason) return 0;
    if (err instanceof ConfigError) {
      io.stderr.write(`error: ${err.message}\n`);
      return 1;
    }
    io.stderr.write(`error: ${errorText(err)}\n`);
    return 1;
  }
};
