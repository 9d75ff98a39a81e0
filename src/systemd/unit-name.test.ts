import { describe, expect, test } from "bun:test";
import { unitNameProblem } from "./unit-name.ts";

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
