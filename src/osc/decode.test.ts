import { describe, expect, test } from "bun:test";
import { decodeOsc } from "./decode.ts";
import { OscDecodeError } from "./errors.ts";

const withPermissions = (p: string) =>
  `spec:\n  files:\n  - path: /a\n    permissions: ${p}\n    content:\n      inline:\n        data: x\n`;

describe("decodeOsc", () => {
  describe("permissions", () => {
    test.each([
      ["0644", 420],
      ["420", 420],
      ["0755", 493],
      ["493", 493],
      ["0600", 384],
      ["0777", 511],
      ["0x1a4", 420],
    ])("should read %s as %d", (src, want) => {
      expect(decodeOsc(withPermissions(src)).spec.files?.[0]?.permissions).toBe(want);
    });

    test("should leave permissions absent when not given", () => {
      const osc = decodeOsc("spec:\n  files:\n  - path: /a\n");
      expect(osc.spec.files?.[0]?.permissions).toBeUndefined();
    });

    test("should reject a quoted string as permissions", () => {
      expect(() => decodeOsc(withPermissions('"0644"'))).toThrow(OscDecodeError);
    });
  });

  test("should keep strings that only look like numbers as strings", () => {
    const osc = decodeOsc("spec:\n  files:\n  - path: /a\n    content:\n      inline:\n        data: '0644'\n");
    expect(osc.spec.files?.[0]?.content.inline?.data).toBe("0644");
  });

  test("should ignore unknown fields", () => {
    const osc = decodeOsc("spec:\n  foo: bar\n  units:\n  - name: a.service\n    weird: 1\n");
    expect(JSON.parse(JSON.stringify(osc.spec.units))).toEqual([{ name: "a.service" }]);
  });

  test("should accept JSON input", () => {
    const osc = decodeOsc('{"spec":{"units":[{"name":"u","enable":false}]}}');
    expect(osc.spec.units?.[0]?.enable).toBe(false);
  });

  test("should fill in apiVersion and kind when missing", () => {
    const osc = decodeOsc("spec: {}\n");
    expect(osc.apiVersion).toBe("extensions.gardener.cloud/v1alpha1");
    expect(osc.kind).toBe("OperatingSystemConfig");
  });

  test.each([
    ["apiVersion: v1\nkind: Secret\n"],
    ["apiVersion: extensions.gardener.cloud/v1alpha1\nkind: Worker\n"],
    ["kind: Secret\n"],
    ["- a\n- b\n"],
    ["spec: [\n"],
    ["spec:\n  units:\n  - content: x\n"],
  ])("should reject %p", (src) => {
    expect(() => decodeOsc(src)).toThrow(OscDecodeError);
  });

  test("should treat empty lists like absent ones", () => {
    const osc = decodeOsc("spec:\n  units:\n  - name: a\n    dropIns: []\n    filePaths: null\n");
    expect(osc.spec.units?.[0]?.dropIns).toBeUndefined();
    expect(osc.spec.units?.[0]?.filePaths).toBeUndefined();
  });

  test("should read YAML 1.1 booleans in boolean fields", () => {
    const osc = decodeOsc("spec:\n  units:\n  - name: a\n    enable: no\n");
    expect(osc.spec.units?.[0]?.enable).toBe(false);
  });
});

describe("decodeOsc with bad input", () => {
  const secret = "c2VjcmV0LXRva2VuLTk4NzY1NDMyMTA";
  const failure = (src: string): OscDecodeError => {
    try {
      decodeOsc(src);
    } catch (err) {
      if (err instanceof OscDecodeError) return err;
      throw err;
    }
    throw new Error("expected an OscDecodeError");
  };

  test.each([
    [
      "an unclosed quote",
      `spec:\n  files:\n  - path: /a\n    content:\n      inline:\n        data: "${secret}\n  x: [y\n`,
      /^invalid YAML: .* at line \d+, column \d+$/,
    ],
    ["a nested compact mapping", `spec: ${secret}: x\n`, "invalid YAML: a block collection cannot be an implicit key at line 1, column 7"],
    [
      "a wrong type",
      `spec:\n  files:\n  - path: /a\n    permissions: ${secret}\n`,
      "invalid OperatingSystemConfig: spec.files.0.permissions: invalid type: expected number, got string",
    ],
    ["another apiVersion", `apiVersion: ${secret}\n`, 'apiVersion: unexpected value, expected "extensions.gardener.cloud/v1alpha1"'],
    ["another kind", `kind: ${secret}\n`, 'kind: unexpected value, expected "OperatingSystemConfig"'],
  ])("should name the place of %s, never the text", (_what, src, message) => {
    const err = failure(src);
    if (typeof message === "string") expect(err.message).toBe(message);
    else expect(err.message).toMatch(message);
    expect(err.message).not.toContain(secret);
    expect(err.cause).toBeUndefined();
  });

  test.each([
    ["a recursive alias", "spec: &s\n  units: [*s]\n", "invalid YAML: a recursive alias (a node that contains itself)"],
    [
      "an alias bomb",
      `a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [${"*a, ".repeat(10)}*a]\nc: &c [${"*b, ".repeat(10)}*b]\nspec: {}\n`,
      "invalid YAML: an alias is unresolvable or expands too often",
    ],
    ["nesting deeper than 200 levels", `spec: ${"[".repeat(500)}${"]".repeat(500)}\n`, "invalid YAML: nesting deeper than 200 levels"],
    [
      "nesting deep enough to overflow the parser's stack",
      `spec: ${"[".repeat(20_000)}${"]".repeat(20_000)}\n`,
      // the column is where the parser's stack ran out
      /^invalid YAML: nesting too deep to parse \(at most 200 levels are accepted\) at line 1, column \d+$/,
    ],
  ])("should refuse %s with an OscDecodeError", (_what, src, message) => {
    if (typeof message === "string") expect(failure(src).message).toBe(message);
    else expect(failure(src).message).toMatch(message);
  });
});
