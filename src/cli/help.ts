import type { Command, FlagSpec } from "./command.ts";
import type { CommandEntry } from "./commands.ts";

const flagLine = (f: FlagSpec): string => {
  const names = `${f.short === undefined ? "    " : `-${f.short}, `}--${f.name}${f.kind === "string" ? " string" : ""}`;
  const dflt = f.kind === "string" && f.default !== "" ? ` (default ${JSON.stringify(f.default)})` : "";
  return `  ${names.padEnd(28)} ${f.usage}${dflt}`;
};

/** `--help` text of one command (the default command lists the sub-commands too). */
export const helpText = (program: string, cmd: Command, flags: readonly FlagSpec[], subcommands?: readonly CommandEntry[]): string => {
  const lines = [cmd.summary, "", "Usage:", `  ${program}${cmd.name === "run" ? "" : ` ${cmd.name}`} [flags]`];
  if (subcommands !== undefined) lines.push(`  ${program} [command] [flags]`);
  if (cmd.usage !== "") lines.push("", cmd.usage);
  if (subcommands !== undefined) {
    lines.push("", "Available Commands:");
    for (const c of subcommands) lines.push(`  ${c.name.padEnd(12)} ${c.summary}`);
  }
  lines.push("", "Flags:", ...flags.map(flagLine));
  if (subcommands !== undefined) lines.push("", `Use "${program} [command] --help" for more information about a command.`);
  return `${lines.join("\n")}\n`;
};
