import { describe, expect, test } from "bun:test";
import { OscInputError } from "./input-error.ts";
import { unitNameProblem, validateDropInName, validateFilePath, validateRemovedUnitName, validateUnitName } from "./names.ts";

describe("unitNameProblem", () => {
  test.each([
    ["kubelet.service"],
    ["containerd.service"],
    ["var-lib-kubelet.mount"],
    ["getty@.service"],
    ["getty@tty1.service"],
    ["systemd-fsck@dev-disk-by\\x2duuid-1234.service"],
    ["a:b_c.timer"],
    [".hidden.service"],
    [`${"a".repeat(247)}.service`],
  ])("should accept %p as systemd does", (name) => {
    expect(unitNameProblem(name)).toBeUndefined();
  });

  test.each([
    ["", "is empty"],
    ["foo", 'has no unit type suffix (such as ".service")'],
    [".service", 'has no unit type suffix (such as ".service")'],
    [
      "foo.conf",
      "has an unknown unit type suffix (valid: service, socket, target, device, mount, automount, swap, timer, path, slice, scope)",
    ],
    ["foo.", "has an unknown unit type suffix (valid: service, socket, target, device, mount, automount, swap, timer, path, slice, scope)"],
    ["\n.service", 'contains a character other than letters, digits, ":", "-", "_", ".", "\\" and "@"'],
    ["a b.service", 'contains a character other than letters, digits, ":", "-", "_", ".", "\\" and "@"'],
    ["a/b.service", 'contains a character other than letters, digits, ":", "-", "_", ".", "\\" and "@"'],
    ["ünit.service", 'contains a character other than letters, digits, ":", "-", "_", ".", "\\" and "@"'],
    ["@.service", 'has an empty prefix before "@"'],
    ["@foo.service", 'has an empty prefix before "@"'],
    [`${"a".repeat(248)}.service`, "is longer than 255 characters"],
    [`${"a".repeat(292)}.service`, "is longer than 255 characters"],
  ])("should refuse %p: %s", (name, problem) => {
    expect(unitNameProblem(name)).toBe(problem);
  });
});

describe("validateUnitName", () => {
  test("should refuse a name whose drop-in directory could not be written atomically", () => {
    expect(() => validateUnitName(`${"a".repeat(230)}.service`)).toThrow(OscInputError);
  });

  test("should escape a name in its message", () => {
    expect(() => validateUnitName("\nx")).toThrow('invalid unit name "\\nx"');
  });
});

describe("validateRemovedUnitName", () => {
  test.each([["foo"], ["@.service"]])("should let an earlier OSC's unit %p be removed", (name) => {
    expect(() => validateRemovedUnitName(name)).not.toThrow();
  });
  test.each([[""], [".."], ["a/b"]])("should refuse %p", (name) => {
    expect(() => validateRemovedUnitName(name)).toThrow(OscInputError);
  });
});

describe("validateDropInName", () => {
  test.each([["10-x.conf"], ["drop"]])("should accept %p", (name) => {
    expect(() => validateDropInName("u.service", name)).not.toThrow();
  });
  test.each([[""], ["."], [".."], ["a/b"], ["a\nb"], ["x".repeat(238)]])("should refuse %p", (name) => {
    expect(() => validateDropInName("u.service", name)).toThrow(OscInputError);
  });
});

describe("validateFilePath", () => {
  test.each([
    ["/a\nb", "contains a control character"],
    [`/${"x".repeat(238)}`, "has a name longer than 237 bytes"],
    [`/${"x/".repeat(2100)}y`, "is longer than 4095 bytes"],
  ])("should refuse %j", (path, problem) => {
    expect(() => validateFilePath(path)).toThrow(problem);
  });
  test("should accept a name of 237 bytes", () => {
    expect(() => validateFilePath(`/etc/${"x".repeat(237)}`)).not.toThrow();
  });
});
