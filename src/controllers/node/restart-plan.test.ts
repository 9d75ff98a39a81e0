import { describe, expect, test } from "bun:test";
import { isValidServiceName, restartPlan } from "./restart-plan.ts";

describe("restartPlan", () => {
  test("should append .service, keep order and put the agent last (spec example)", () => {
    expect(restartPlan("gardener-node-agent,foo.service,bar")).toEqual({
      restart: ["foo.service", "bar.service"],
      invalid: [],
      restartAgent: true,
    });
  });
  test("should not trim pieces, so a space makes a name invalid", () => {
    expect(restartPlan("foo, bar")).toEqual({ restart: ["foo.service"], invalid: [" bar.service"], restartAgent: false });
  });
  test("should report an empty piece as invalid instead of skipping it", () => {
    expect(restartPlan("foo,")).toEqual({ restart: ["foo.service"], invalid: [".service"], restartAgent: false });
  });
  test("should keep duplicates as upstream does", () => {
    expect(restartPlan("a,a.service").restart).toEqual(["a.service", "a.service"]);
  });
  test("should recognise the agent with and without suffix", () => {
    expect(restartPlan("gardener-node-agent.service").restartAgent).toBe(true);
    expect(restartPlan("gardener-node-agent").restart).toEqual([]);
  });
});

describe("isValidServiceName", () => {
  test.each([
    ["kubelet.service", true],
    ["systemd-journald.service", true],
    ["getty@tty1.service", true],
    ["a:b_c\\x2d.d-e.service", true],
    ["foo.socket.service", true],
    [".service", false],
    ["getty@.service", false],
    ["@tty1.service", false],
    ["a@b@c.service", false],
    ["foo bar.service", false],
    ["foo;rm -rf.service", false],
    ["foo/bar.service", false],
    ["föö.service", false],
    ["foo\n.service", false],
    ["foo.socket", false],
    [`${"a".repeat(247)}.service`, true],
    [`${"a".repeat(248)}.service`, false],
  ] as const)("should judge %p as %p", (unit, want) => {
    expect(isValidServiceName(unit)).toBe(want);
  });
});
