import { describe, expect, test } from "bun:test";
import { parse } from "yaml";
import { parseYaml, YamlSyntaxError } from "./yaml.ts";

// Texts where Bun's native parser and the `yaml` package may disagree, plus ordinary ones.
const samples: readonly string[] = [
  "a: 1\nb: [x, y]\nc: {d: true, e: null}\n",
  '{"a": 1, "b": [true, null], "c": "x"}',
  "server: {healthProbes: {bindAddress: 127.0.0.1, port: 8080}}\nsyncPeriod: 1m30s\nversion: v1.33.0\n",
  "a: 0644",
  "a: 0o17",
  "a: 0x1F",
  "a: 0b101",
  "a: 1_000",
  "a: 1:30",
  "a: yes\nb: No\nc: on\nd: OFF\ne: y\nf: n",
  "a: 2001-12-14",
  "a: 2001-12-14T21:59:43.10-05:00",
  "a: ~\nb: null",
  "a: .5\nb: 1e3\nc: -.inf",
  "a: True\nb: FALSE",
  "a: &x {b: 1}\nc: *x",
  "a: &x [1, 2]\nb: [*x, *x]\nc:\n- *x\n",
  'cmd: "ls *.conf"\nglob: a/*\nstars: "**"\n',
  "base: &b {x: 1}\nderived:\n  <<: *b\n  y: 2\n",
  "---\na: 1\n",
  'a: !!str 1\nb: !!int "3"',
  "%YAML 1.1\n---\na: yes\n",
  "? a\n: c\n",
  "1: a\ntrue: b\nnull: c\n",
  "a: |\n  x\n  y\nb: >-\n  x\n  y\n",
  "",
  "# only a comment\n",
  "- a\n- b\n",
  "a: 'it''s'\nb: \"\\u00e9\"\n",
];

const outcome = (f: () => unknown): { value: unknown } | { error: string } => {
  try {
    return { value: f() };
  } catch (err) {
    return { error: (err as Error).message.split("\n", 1)[0] ?? "" };
  }
};

describe("parseYaml", () => {
  describe.each(["1.1", "1.2"] as const)("in YAML %s", (version) => {
    test.each(samples.map((s) => [JSON.stringify(s), s]))("should read %s as the yaml package does", (_, text) => {
      expect(outcome(() => parseYaml(text, version))).toEqual(outcome(() => parse(text, { version })));
    });

    test.each([
      ["a: [", "bad indentation at line 1, column 5"],
      ["a: 'x", "a closing quote or bracket is missing at line 1, column 6"],
      ["\ta: 1", "a tab used as indentation at line 1, column 1"],
      ["a: b: c", "a block collection cannot be an implicit key at line 1, column 4"],
    ])("should reject %p naming the line and column, never the text", (text, message) => {
      let caught: unknown;
      try {
        parseYaml(text, version);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(YamlSyntaxError);
      expect((caught as Error).message).toBe(message);
      expect((caught as Error).cause).toBeUndefined();
      expect(outcome(() => parse(text, { version }))).toHaveProperty("error");
    });

    test.each([
      ["flow", `a: ${"[".repeat(20_000)}${"]".repeat(20_000)}`],
      ["block", `a:\n  ${"- ".repeat(20_000)}x`],
      ["mapping", `a: ${"{a: ".repeat(20_000)}1${"}".repeat(20_000)}`],
    ])("should reject %s nesting too deep for the parser's stack as a YamlSyntaxError", (_, text) => {
      expect(() => parseYaml(text, version)).toThrow(new YamlSyntaxError("nesting too deep to parse (at most 200 levels are accepted)"));
    });

    test("should stop an alias bomb at the yaml package's alias cap, before expanding it", () => {
      let text = "l0: &l0 [x, x, x, x, x]\n";
      for (let i = 1; i <= 9; i++)
        text += `l${i}: &l${i} [${Array(5)
          .fill(`*l${i - 1}`)
          .join(", ")}]\n`;
      expect(() => parseYaml(text, version)).toThrow(new YamlSyntaxError("an alias is unresolvable or expands too often"));
    });

    test("should take the last of duplicate keys (as Go's yaml.v2 does) where the yaml package fails", () => {
      expect(parseYaml("a: 1\na: 2\n", version)).toEqual({ a: 2 });
    });
  });
});
