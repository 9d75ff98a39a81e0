import { describe, expect, test } from "bun:test";
import { canonicalSemVer, isSupportedKubernetesVersion, SemVerError } from "./semver.ts";

describe("canonicalSemVer", () => {
  test.each([
    ["1.28.2", "1.28.2"],
    ["v1.33.0", "1.33.0"],
    ["v1.33", "1.33.0"],
    ["1.33", "1.33.0"],
    ["1", "1.0.0"],
    ["v1.36.2-rc.1", "1.36.2-rc.1"],
    ["1.2.3+build.5", "1.2.3+build.5"],
    ["1.2.3-alpha.1+meta", "1.2.3-alpha.1+meta"],
  ])("should turn %p into %p", (input, out) => {
    expect(canonicalSemVer(input)).toBe(out);
  });

  test.each(["", "foo", "1.2.3.4", "v", "1.2.3-", "1.2.3-01", "1..2"])("should reject %p", (input) => {
    expect(() => canonicalSemVer(input)).toThrow(SemVerError);
  });
});

describe("isSupportedKubernetesVersion", () => {
  test.each([
    ["1.32.0", true],
    ["1.33.0", true],
    ["v1.36.2-rc.1", true],
    ["1.35.9+meta", true],
    ["1.31.0", false],
    ["1.37.0", false],
    ["2.33.0", false],
  ])("should report %p as %p", (version, supported) => {
    expect(isSupportedKubernetesVersion(version)).toBe(supported);
  });
});
