import type { FlagSpec } from "./command.ts";
import { UsageError } from "./errors.ts";

/** Flags every command has. */
export const commonFlags: readonly FlagSpec[] = [
  {
    name: "config-dir",
    kind: "string",
    default: "/var/lib/gardener-node-agent",
    usage: "directory holding the config file config-<version>.yaml",
  },
  { name: "root", kind: "string", default: "/", usage: "host root every host path is resolved under" },
  { name: "log-level", kind: "string", default: "", usage: "log level (debug, info, error); overrides logLevel of the config" },
  { name: "log-format", kind: "string", default: "", usage: "log format (json, text); overrides logFormat of the config" },
  { name: "version", kind: "bool", default: "false", usage: "print the version and exit (--version=raw prints build details)" },
  { name: "help", short: "h", kind: "bool", default: "false", usage: "help for this command" },
];

export interface ParsedFlags {
  readonly values: Readonly<Record<string, string>>;
  readonly explicit: ReadonlySet<string>;
}

/** Bool values accepted by each bool flag; `--version=raw` is the component-base extra. */
const boolValues = (name: string): readonly string[] => (name === "version" ? ["true", "false", "raw"] : ["true", "false"]);

/**
 * Parses `--flag=value`, `--flag value`, `--bool`, `--bool=false` and `-h` against `specs`.
 * Positional arguments are refused, like the Go agent (cobra.NoArgs), except one bare argument
 * for a flag marked `positional` (render, apply).
 */
export const parseFlags = (args: readonly string[], specs: readonly FlagSpec[]): ParsedFlags => {
  const values: Record<string, string> = Object.fromEntries(specs.map((s) => [s.name, s.default]));
  const explicit = new Set<string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? "";
    if (arg === "--") {
      const extra = args[i + 1];
      if (extra !== undefined) throw new UsageError(`unexpected argument ${JSON.stringify(extra)}`);
      break;
    }
    let spec: FlagSpec | undefined;
    let inline: string | undefined;
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
      inline = eq < 0 ? undefined : arg.slice(eq + 1);
      spec = specs.find((s) => s.name === name);
      if (spec === undefined) throw new UsageError(`unknown flag --${name}`);
    } else if (arg.startsWith("-") && arg.length > 1) {
      const short = arg.slice(1, 2);
      spec = specs.find((s) => s.short === short);
      if (spec === undefined || arg.length > 2) throw new UsageError(`unknown shorthand flag ${JSON.stringify(short)} in ${arg}`);
    } else {
      const target = specs.find((s) => s.positional === true);
      if (target === undefined || explicit.has(target.name)) throw new UsageError(`unexpected argument ${JSON.stringify(arg)}`);
      values[target.name] = arg;
      explicit.add(target.name);
      continue;
    }
    let value: string;
    if (spec.kind === "bool") {
      value = inline ?? "true";
      if (!boolValues(spec.name).includes(value)) {
        throw new UsageError(`invalid argument ${JSON.stringify(value)} for --${spec.name}`);
      }
    } else if (inline !== undefined) {
      value = inline;
    } else {
      const next = args[i + 1];
      if (next === undefined) throw new UsageError(`flag needs an argument: --${spec.name}`);
      value = next;
      i++;
    }
    values[spec.name] = value;
    explicit.add(spec.name);
  }
  return { values, explicit };
};
