import { describe, expect, test } from "bun:test";
import { parseChallenge } from "./auth.ts";

describe("parseChallenge", () => {
  test("should read a bearer challenge with quoted parameters", () => {
    expect(
      parseChallenge('Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/busybox:pull"'),
    ).toEqual({
      scheme: "bearer",
      params: { realm: "https://auth.docker.io/token", service: "registry.docker.io", scope: "repository:library/busybox:pull" },
    });
  });

  test("should read a basic challenge and unquoted values", () => {
    expect(parseChallenge("Basic realm=registry")).toEqual({ scheme: "basic", params: { realm: "registry" } });
    expect(parseChallenge("Negotiate").scheme).toBe("other");
  });
});
