import { describe, expect, test } from "bun:test";
import { compileGlob, DisruptionPolicyError, parseDisruptionPolicy, ruleMatchesFile, ruleText } from "./disruption-policy.ts";

const bad = (text: string): string => {
  try {
    parseDisruptionPolicy(text);
  } catch (err) {
    expect(err).toBeInstanceOf(DisruptionPolicyError);
    return (err as Error).message;
  }
  throw new Error("parsed");
};

describe("parseDisruptionPolicy", () => {
  test("reads files and units rules in order, with their lines", () => {
    const p = parseDisruptionPolicy(
      ["rules:", "- files: [/etc/ssh/*]", "  action: none", "- units: [kubelet.service]", "  action: reload", ""].join("\n"),
    );
    expect(p.rules).toEqual([
      { index: 1, line: 2, files: ["/etc/ssh/*"], action: "none" },
      { index: 2, line: 4, units: ["kubelet.service"], action: "reload" },
    ]);
    expect(ruleText(p.rules[1] as (typeof p.rules)[number])).toBe("rule 2 (line 4): units [kubelet.service] → reload");
  });

  test("an empty file and an empty list are policies without rules", () => {
    expect(parseDisruptionPolicy("")).toEqual({ rules: [] });
    expect(parseDisruptionPolicy("rules: []\n")).toEqual({ rules: [] });
  });

  test.each([
    ["an unknown top-level key, without its text", "rules: []\nbounce-secret: 1\n", "line 2: unknown key (only rules is allowed)"],
    [
      "an unknown rule key, without its text",
      "rules:\n- units: [a.service]\n  action: none\n  bounce-secret: now\n",
      "line 4: unknown key in rule 1",
    ],
    ["a bad action, without its value", "rules:\n- units: [a.service]\n  action: bounce-secret\n", "line 3: action must be one of"],
    ["a bad glob", "rules:\n- files: ['/etc/[ab']\n  action: none\n", 'line 2: files[0] has an unclosed "["'],
    [
      "a relative glob",
      "rules:\n- units: [a.service]\n  action: none\n- files: ['etc/*']\n  action: none\n",
      "line 4: files[0] is not an absolute",
    ],
    ["a bad unit name", "rules:\n- units: [a.service, kubelet]\n  action: none\n", "line 2: units[1] has no unit type suffix"],
    ["both files and units", "rules:\n- units: [a.service]\n  files: [/a]\n  action: none\n", "line 2: rule 1 has both files and units"],
    ["no action", "rules:\n- units: [a.service]\n", "line 2: rule 1 has no action"],
    ["rules not a list", "rules: {a: b}\n", "line 1: rules must be a list"],
    ["broken YAML", "rules:\n- units: [a.service\n", "line"],
  ])("%s is an error naming the line", (_what, text, message) => {
    const m = bad(text);
    expect(m).toContain(message);
    expect(m).not.toContain("bounce-secret");
  });
});

describe("globs", () => {
  test.each([
    ["/etc/ssh/*", "/etc/ssh/sshd_config", true],
    ["/etc/ssh/*", "/etc/ssh/d/x", false],
    ["/etc/**", "/etc/ssh/d/x", true],
    ["/etc/**/x", "/etc/x", true],
    ["/etc/**/x", "/etc/a/b/x", true],
    ["/var/log/?.log", "/var/log/a.log", true],
    ["/var/log/[!a].log", "/var/log/a.log", false],
    ["/var/log/[a-c].log", "/var/log/b.log", true],
    ["/a.b", "/aXb", false],
  ])("%s against %s", (glob, path, want) => {
    expect(compileGlob(glob).test(path)).toBe(want);
    expect(ruleMatchesFile({ index: 1, line: 1, files: [glob], action: "none" }, path)).toBe(want);
  });
});
