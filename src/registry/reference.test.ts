import { describe, expect, test } from "bun:test";
import { formatImageReference, parseImageReference, registryEndpoint } from "./reference.ts";
import { RegistryError } from "./errors.ts";

const D = `sha256:${"a".repeat(64)}`;

describe("parseImageReference", () => {
  test.each([
    ["busybox", { registry: "docker.io", repository: "library/busybox", tag: "latest" }],
    ["gardener/node-agent:v1", { registry: "docker.io", repository: "gardener/node-agent", tag: "v1" }],
    ["docker.io/library/alpine:3", { registry: "docker.io", repository: "library/alpine", tag: "3" }],
    ["index.docker.io/alpine", { registry: "docker.io", repository: "library/alpine", tag: "latest" }],
    ["127.0.0.1:5000/gna:v1.2.3", { registry: "127.0.0.1:5000", repository: "gna", tag: "v1.2.3" }],
    ["localhost/a/b/c", { registry: "localhost", repository: "a/b/c", tag: "latest" }],
    [
      `europe-docker.pkg.dev/gardener-project/releases/gardener/node-agent@${D}`,
      { registry: "europe-docker.pkg.dev", repository: "gardener-project/releases/gardener/node-agent", digest: D },
    ],
    [`reg:443/x:v1@${D}`, { registry: "reg:443", repository: "x", tag: "v1", digest: D }],
  ])("should parse %p", (input, expected) => {
    expect(parseImageReference(input)).toEqual(expected);
  });

  test.each(["", "UPPER/case", "x@sha256:short", "x:bad tag", "reg:5000/"])("should reject %p", (input) => {
    expect(() => parseImageReference(input)).toThrow(RegistryError);
  });

  test("should map Docker Hub to its API host and format references back", () => {
    expect(registryEndpoint("docker.io")).toBe("registry-1.docker.io");
    expect(registryEndpoint("127.0.0.1:5000")).toBe("127.0.0.1:5000");
    expect(formatImageReference({ registry: "r:1", repository: "a/b", digest: D })).toBe(`r:1/a/b@${D}`);
  });
});
