import { describe, expect, test } from "bun:test";
import type { FlagSpec } from "./command.ts";
import { UsageError } from "./errors.ts";
import { commonFlags, parseFlags } from "./flags.ts";

const specs: FlagSpec[] = [...commonFlags, { name: "binary", kind: "string", default: "", usage: "" }];

describe("parseFlags", () => {
  test("should fill in every default", () => {
    expect(parseFlags([], specs).values).toEqual({
      "config-dir": "/var/lib/gardener-node-agent",
      root: "/",
      "log-level": "",
      "log-format": "",
      version: "false",
      help: "false",
      binary: "",
    });
  });

  test.each<[string[], Record<string, string>]>([
    [["--config-dir=/x"], { "config-dir": "/x" }],
    [["--config-dir", "/x"], { "config-dir": "/x" }],
    [["--root="], { root: "" }],
    [["--version"], { version: "true" }],
    [["--version=raw"], { version: "raw" }],
    [["--help=false"], { help: "false" }],
    [["-h"], { help: "true" }],
    [["--binary", "--weird"], { binary: "--weird" }],
    [["--log-level", "debug", "--log-format=text"], { "log-level": "debug", "log-format": "text" }],
  ])("should read %p", (args, expected) => {
    expect(parseFlags(args, specs).values).toMatchObject(expected);
  });

  test("should record which flags were given", () => {
    expect([...parseFlags(["--root", "/r", "-h"], specs).explicit]).toEqual(["root", "help"]);
  });

  test.each<[string[], string]>([
    [["--foo"], "unknown flag --foo"],
    [["--foo=1"], "unknown flag --foo"],
    [["-x"], 'unknown shorthand flag "x" in -x'],
    [["-hx"], 'unknown shorthand flag "h" in -hx'],
    [["extra"], 'unexpected argument "extra"'],
    [["--", "extra"], 'unexpected argument "extra"'],
    [["--root"], "flag needs an argument: --root"],
    [["--help=yes"], 'invalid argument "yes" for --help'],
    [["--help=raw"], 'invalid argument "raw" for --help'],
  ])("should refuse %p with a UsageError", (args, message) => {
    expect(() => parseFlags(args, specs)).toThrow(new UsageError(message));
  });
});

describe("parseFlags with a positional flag", () => {
  const specs: FlagSpec[] = [
    { name: "osc", kind: "string", default: "", usage: "", positional: true },
    { name: "format", kind: "string", default: "bash", usage: "" },
  ];

  test("fills the positional flag from one bare argument", () => {
    const parsed = parseFlags(["--format", "cloud-config", "osc.yaml"], specs);
    expect(parsed.values["osc"]).toBe("osc.yaml");
    expect(parsed.explicit.has("osc")).toBe(true);
  });

  test("refuses a second bare argument", () => {
    expect(() => parseFlags(["a.yaml", "b.yaml"], specs)).toThrow('unexpected argument "b.yaml"');
  });

  test("refuses a bare argument when the flag was given too", () => {
    expect(() => parseFlags(["--osc=a.yaml", "b.yaml"], specs)).toThrow('unexpected argument "b.yaml"');
  });
});
