import { describe, expect, test } from "bun:test";
import { OscInputError } from "./input-error.ts";
import { validateDropInName, validateFilePath, validateRemovedUnitName, validateUnitName } from "./names.ts";

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
