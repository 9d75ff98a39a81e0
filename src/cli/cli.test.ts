import { describe, expect, test } from "bun:test";
import { ConfigError } from "../config/index.ts";
import { RestartRequested } from "../kube/index.ts";
import { runCli } from "./cli.ts";
import type { CliIo, CommandRegistry } from "./cli.ts";
import type { Command, CommandContext } from "./command.ts";

const entry = (cmd: Command) => ({ name: cmd.name, summary: cmd.summary, load: async () => cmd });

const command = (name: string, run: (ctx: CommandContext) => Promise<number>): Command => ({
  name,
  summary: `The ${name} command`,
  usage: "",
  flags: [{ name: "binary", kind: "string", default: "", usage: "a path" }],
  run,
});

const harness = (run: (ctx: CommandContext) => Promise<number>, signal = new AbortController().signal) => {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    stdout: { write: (s) => out.push(String(s)) },
    stderr: { write: (s) => err.push(String(s)) },
    env: { A: "1" },
    signal,
    program: "gna",
    version: "v1.2.3",
    revision: "abc",
  };
  const registry: CommandRegistry = { run: entry(command("run", run)), subcommands: [entry(command("sub", run))] };
  return { cli: (argv: string[]) => runCli(argv, io, registry), out, err };
};

describe("runCli", () => {
  test("should hand the command its flags, root, config dir and environment", async () => {
    let seen: CommandContext | undefined;
    const h = harness(async (ctx) => {
      seen = ctx;
      return 7;
    });
    expect(await h.cli(["sub", "--root=/r", "--binary", "/b"])).toBe(7);
    expect(seen).toMatchObject({
      command: "sub",
      root: "/r",
      configDir: "/var/lib/gardener-node-agent",
      env: { A: "1" },
      version: "v1.2.3",
    });
    expect(seen?.flags["binary"]).toBe("/b");
    expect([...(seen?.explicitFlags ?? [])]).toEqual(["root", "binary"]);
  });

  test("should print the version without running the command", async () => {
    const h = harness(async () => 9);
    expect(await h.cli(["sub", "--version"])).toBe(0);
    expect(h.out).toEqual(["gna v1.2.3\n"]);
  });

  test("should list sub-commands and own flags in the default command's help", async () => {
    const h = harness(async () => 9);
    expect(await h.cli(["-h"])).toBe(0);
    expect(h.out.join("")).toContain("Available Commands:\n  sub          The sub command\n");
    expect(h.out.join("")).toContain("--binary string");
  });

  test.each<[string, unknown, number, string]>([
    ["a config error", new ConfigError("validate", "/c.yaml", [], "logFormat: bad"), 1, "error: invalid config: /c.yaml: logFormat: bad\n"],
    ["an unexpected error", new Error("boom", { cause: new Error("inner") }), 1, "error: boom: inner\n"],
    ["a thrown string", "weird", 1, "error: weird\n"],
    ["a restart request", new RestartRequested("node registered"), 0, ""],
  ])("should turn %s into one line and exit code", async (_, thrown, code, line) => {
    const h = harness(async () => {
      throw thrown;
    });
    expect(await h.cli([])).toBe(code);
    expect(h.err.join("")).toBe(line);
  });

  test("should exit 0 when the command fails because of the shutdown signal", async () => {
    const controller = new AbortController();
    const h = harness(async (ctx) => {
      controller.abort(new Error("received SIGTERM"));
      throw ctx.signal.reason;
    }, controller.signal);
    expect(await h.cli([])).toBe(0);
    expect(h.err).toEqual([]);
  });

  test("should name the sub-command in the usage hint", async () => {
    const h = harness(async () => 0);
    expect(await h.cli(["sub", "--nope"])).toBe(2);
    expect(h.err).toEqual(["error: unknown flag --nope (see 'gna sub --help')\n"]);
  });
});
