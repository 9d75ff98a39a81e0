import { describe, expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeConfig } from "../config/index.ts";
import type { LoadedConfig } from "../config/index.ts";
import type { CommandContext } from "./command.ts";
import { UsageError } from "./errors.ts";
import { createCommandSink, flagLines, logSettings, startCommandLogger } from "./startup.ts";

const loaded = (text = ""): LoadedConfig => ({ config: decodeConfig(text), path: "/etc/c.yaml", warnings: ["Config file x not found"] });

const context = (flags: Record<string, string>, env: Record<string, string> = {}, out: string[] = []): CommandContext => ({
  command: "run",
  flags: { "config-dir": "/d", root: "/", "log-level": "", "log-format": "", version: "false", help: "false", ...flags },
  explicitFlags: new Set(Object.keys(flags)),
  root: "/",
  configDir: "/d",
  env,
  stdout: { write: (s) => out.push(String(s)) },
  stderr: { write: () => {} },
  signal: new AbortController().signal,
  version: "v1.2.3",
  revision: "r",
});

describe("logSettings", () => {
  test.each<[Record<string, string>, string, { level: string; format: string }]>([
    [{}, "", { level: "info", format: "json" }],
    [{}, "logLevel: debug\nlogFormat: text", { level: "debug", format: "text" }],
    [{ "log-level": "error", "log-format": "json" }, "logLevel: debug\nlogFormat: text", { level: "error", format: "json" }],
  ])("should let flags %p win over the config %p", (flags, config, expected) => {
    expect(logSettings(context(flags), loaded(config))).toEqual(expected as never);
  });

  test("should refuse an unknown --log-level as a usage error", () => {
    expect(() => logSettings(context({ "log-level": "warn" }), loaded())).toThrow(UsageError);
  });
});

describe("flagLines", () => {
  test("should print every flag sorted and quoted", () => {
    expect(flagLines(context({ root: "/r x" }))).toEqual([
      'FLAG: --config-dir="/d"',
      'FLAG: --help="false"',
      'FLAG: --log-format=""',
      'FLAG: --log-level=""',
      'FLAG: --root="/r x"',
      'FLAG: --version="false"',
    ]);
  });
});

describe("createCommandSink", () => {
  test("should write plain lines outside systemd", async () => {
    const out: string[] = [];
    (await createCommandSink(context({}, {}, out), "text")).write({ time: 0, severity: "info", msg: "M", fields: {} });
    expect(out).toEqual(["1970-01-01T00:00:00.000Z\tINFO\tM\n"]);
  });

  // Without journald (CI containers) records fall back to priority-prefixed lines. journald's own
  // socket is not looked at: src/systemd/journal.test.ts binds it for a moment while files run side by side.
  test("should use <N>-prefixed lines under systemd when the journal is not reachable", async () => {
    const out: string[] = [];
    const unreachable = join(tmpdir(), `gna-no-journald-${process.pid}`, "socket");
    (await createCommandSink(context({}, { JOURNAL_STREAM: "8:123" }, out), "text", unreachable)).write({
      time: 0,
      severity: "error",
      msg: "M",
      fields: {},
    });
    expect(out).toEqual(["<3>1970-01-01T00:00:00.000Z\tERROR\tM\n"]);
  });
});

describe("startCommandLogger", () => {
  test("should log the start line, the flags and the loader warnings", async () => {
    const out: string[] = [];
    await startCommandLogger(context({}, {}, out), loaded(), "gardener-node-init");
    const records = out.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records[0]).toMatchObject({
      level: "info",
      logger: "gardener-node-init",
      msg: "Starting gardener-node-init",
      version: "v1.2.3",
    });
    expect(records.slice(1, 7).map((r) => r["msg"])).toEqual(flagLines(context({})));
    expect(records[7]).toMatchObject({ level: "warn", msg: "Config file x not found", path: "/etc/c.yaml" });
  });
});
