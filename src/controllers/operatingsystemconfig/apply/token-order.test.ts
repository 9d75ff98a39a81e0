import { describe, expect, test } from "bun:test";
import { tokenPathsReadBy } from "./token-order.ts";

const syncs = [
  { secretName: "valitail", path: "/var/lib/valitail/auth-token" },
  { secretName: "other", path: "/var/lib/other/token" },
];

describe("tokenPathsReadBy", () => {
  test.each([
    ["a filePaths entry", { name: "a.service", filePaths: ["/var/lib/valitail/auth-token"] }, ["valitail"]],
    ["the unit content", { name: "b.service", content: "[Service]\nExecStart=/x --token=/var/lib/other/token\n" }, ["other"]],
    [
      "a drop-in",
      { name: "c.service", dropIns: [{ name: "10.conf", content: "Environment=T=/var/lib/valitail/auth-token" }] },
      ["valitail"],
    ],
    ["nothing", { name: "d.service", content: "[Service]\nExecStart=/bin/true\n", filePaths: ["/etc/x"] }, []],
  ])("should find token paths named in %s", (_, unit, secrets) => {
    expect(tokenPathsReadBy(unit, syncs).map((s) => s.secretName)).toEqual(secrets);
  });
});
