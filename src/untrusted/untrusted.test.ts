import { describe, expect, test } from "bun:test";
import * as v from "valibot";
import { HostFileKindError, HostPathError } from "../host/index.ts";
import { issuesMessage, quoteName, urlForMessage } from "./index.ts";

const secret = "c2VjcmV0LXRva2VuLTk4NzY1NDMyMTA";

describe("quoteName", () => {
  test("should escape control characters and quotes", () => {
    expect(quoteName('/etc/a"b\nc')).toBe('"/etc/a\\"b\\nc"');
  });

  test("should cut a name to 80 characters", () => {
    const q = quoteName(`/${"a".repeat(100)}${secret}`);
    expect(q).toBe(`"/${"a".repeat(76)}..."`);
    expect(q).not.toContain(secret);
  });
});

describe("urlForMessage", () => {
  test.each([
    ["user info", `https://user:${secret}@mirror.example:5000/v2/`, "https://mirror.example:5000/v2/"],
    ["a query", `https://store.example/blob?X-Amz-Signature=${secret}&X-Amz-Credential=${secret}`, "https://store.example/blob"],
    ["a fragment", `https://r.example/#${secret}`, "https://r.example/"],
    ["text that is not a URL", `not a url ${secret}`, "(unparsable URL)"],
  ])("should leave out %s", (_what, url, shown) => {
    expect(urlForMessage(url)).toBe(shown);
  });

  test("should cut a long URL to 80 characters", () => {
    expect(urlForMessage(`https://r.example/${"p".repeat(100)}`)).toBe(`https://r.example/${"p".repeat(59)}...`);
  });
});

describe("issuesMessage", () => {
  test("should name the path and the expected kind of the first three issues, never their values", () => {
    const schema = v.object({ a: v.string(), b: v.array(v.number()), c: v.boolean(), d: v.string() });
    const res = v.safeParse(schema, { a: 12_345_678_901, b: [secret], c: secret, d: secret });
    expect(res.success).toBe(false);
    const text = issuesMessage(res.issues ?? []);
    expect(text).toBe(
      "a: invalid type: expected string, got number; b.0: invalid type: expected number, got string; c: invalid type: expected boolean, got string",
    );
    expect(text).not.toContain(secret);
  });
});

describe("host errors", () => {
  test("should name a path escaped and cut, as other input errors do", () => {
    const path = `/etc/${"x".repeat(90)}\n${secret}`;
    expect(new HostPathError(path, "not absolute").message).toBe(`invalid host path "/etc/${"x".repeat(72)}...": not absolute`);
    expect(new HostFileKindError("/etc/a\nb", "dir", "write").message).toBe('cannot write "/etc/a\\nb": it is a directory');
  });
});
