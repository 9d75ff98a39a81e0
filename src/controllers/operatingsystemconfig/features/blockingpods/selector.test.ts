import { describe, expect, test } from "bun:test";
import { labelSelectorProblem } from "./selector.ts";

describe("labelSelectorProblem", () => {
  test.each([
    "app=db",
    "app==db",
    "app!=db",
    "app",
    "!app",
    "app in (db, cache)",
    "app notin (db)",
    "example.com/role=primary,tier",
    "app=",
  ])("%s is valid", (s) => {
    expect(labelSelectorProblem(s)).toBeUndefined();
  });

  test.each([
    ["", "the selector is empty"],
    ["app=db,", "requirement 2 is empty"],
    ["app in (db", "parentheses do not match"],
    ["app=d b", "requirement 1 is not of the form"],
    ["-app=db", "requirement 1: a key is not a label name"],
    ["Bad_Prefix/app=db", "requirement 1: a key prefix is not a DNS subdomain"],
    ["app=db-", "requirement 1: a value is not a label value"],
    ["app in (ok, -no)", "requirement 1: a value is not a label value"],
  ])("%s: %s", (s, problem) => {
    expect(labelSelectorProblem(s)).toStartWith(problem);
  });
});
