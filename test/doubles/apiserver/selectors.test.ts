import { describe, expect, test } from "bun:test";
import { matchFields, matchLabels, parseFieldSelector, parseLabelSelector } from "./selectors.ts";
import { SimApiError } from "./status.ts";

describe("parseLabelSelector", () => {
  const labels = { app: "web", tier: "front", n: "5" };
  test.each([
    ["", true],
    ["app=web", true],
    ["app==web", true],
    ["app!=web", false],
    ["missing!=x", true],
    ["app in (web, db)", true],
    ["app notin (web)", false],
    ["missing notin (web)", true],
    ["app", true],
    ["!app", false],
    ["!missing", true],
    ["app=web,tier=front", true],
    ["app=web,tier=back", false],
    ["n>4", true],
    ["n<4", false],
    ["example.com/key", false],
  ])("should evaluate %p to %p", (sel, want) => {
    expect(matchLabels(parseLabelSelector(sel), labels)).toBe(want);
  });

  test.each(["app=web=x", "app in web", "-bad=1", "app=has space"])("should reject %p with a 400", (sel) => {
    expect(() => parseLabelSelector(sel)).toThrow(SimApiError);
  });
});

describe("parseFieldSelector", () => {
  const pod = { metadata: { name: "p", namespace: "ns" }, spec: { nodeName: "n1" } };
  test.each([
    ["metadata.name=p", true],
    ["metadata.name==p", true],
    ["metadata.name!=p", false],
    ["metadata.namespace=ns,spec.nodeName=n1", true],
    ["spec.nodeName=n2", false],
    ["spec.nodeName!=n2", true],
  ])("should evaluate %p on a pod to %p", (sel, want) => {
    expect(matchFields("pods", parseFieldSelector(sel), pod)).toBe(want);
  });

  test("should keep escaped commas and equals signs in values", () => {
    expect(parseFieldSelector("metadata.name=a\\,b\\=c")).toEqual([{ field: "metadata.name", op: "=", value: "a,b=c" }]);
  });
});
