import { describe, expect, test } from "bun:test";
import { decodeOsc } from "./decode.ts";
import { OscDecodeError } from "./errors.ts";

const withPermissions = (p: string) => `spec:\n  files:\n  - path: /a\n    permissions: ${p}\n    content:\n      inline:\n        data: x\n`;

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
