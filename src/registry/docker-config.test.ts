import { describe, expect, test } from "bun:test";
import { dockerConfigKeyHost, parseDockerConfig, RegistryAuthConfigError, registryAuthModeProblem } from "./docker-config.ts";

const b64 = (s: string) => Buffer.from(s).toString("base64");

describe("dockerConfigKeyHost", () => {
  test.each([
    ["ghcr.io", "ghcr.io"],
    ["https://index.docker.io/v1/", "registry-1.docker.io"],
    ["docker.io", "registry-1.docker.io"],
    ["http://127.0.0.1:5000", "127.0.0.1:5000"],
    ["https://Registry.Example.com:8443/v2/", "registry.example.com:8443"],
  ])("should map %p to %p", (key, host) => {
    expect(dockerConfigKeyHost(key)).toBe(host);
  });
});

describe("registryAuthModeProblem", () => {
  // The owner's bits are the owner's; group and others get nothing (the one rule for the host's file and the pending OSC's).
  test.each([0o600, 0o400, 0o700, 0o200, 0o4600])("should accept mode %o", (mode) => {
    expect(registryAuthModeProblem(mode)).toBeUndefined();
  });

  test.each([
    [0o644, "0644"],
    [0o640, "0640"],
    [0o604, "0604"],
    [0o620, "0620"],
    [0o602, "0602"],
    [0o610, "0610"],
    [0o601, "0601"],
  ])("should refuse mode %o, naming it", (mode, text) => {
    expect(registryAuthModeProblem(mode)).toBe(`mode ${text} gives group or others access to registry credentials, want 0600`);
  });
});

describe("parseDockerConfig", () => {
  test("should read auth, username/password and identitytoken entries", () => {
    const text = JSON.stringify({
      auths: {
        "a.example": { auth: b64("robot:pa:ss") },
        "https://b.example/v1/": { username: "u", password: "p" },
        "c.example": { identitytoken: "refresh-me" },
      },
    });
    expect(parseDockerConfig(text, "/f")).toEqual({
      "a.example": { username: "robot", password: "pa:ss" },
      "b.example": { username: "u", password: "p" },
      "c.example": { username: "", password: "", identityToken: "refresh-me" },
    });
  });

  test("should accept a file without auths as no credentials", () => {
    expect(parseDockerConfig("{}", "/f")).toEqual({});
  });

  test.each([
    ["not json", "/f: not valid JSON"],
    [JSON.stringify({ auths: { x: { auth: 5 } } }), '/f: invalid field "auths.x.auth"'],
    [JSON.stringify({ auths: { x: { auth: b64("nocolon") } } }), '/f: auths["x"].auth is not base64 of "user:password"'],
    [JSON.stringify({ auths: { x: { auth: "!!!" } } }), '/f: auths["x"].auth is not base64'],
    [JSON.stringify({ auths: { x: {} } }), '/f: auths["x"] has neither auth, username/password nor identitytoken'],
  ])("should refuse %p with a message naming the field and no secret", (text, message) => {
    let err: unknown;
    try {
      parseDockerConfig(text, "/f");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RegistryAuthConfigError);
    expect((err as Error).message).toBe(message);
  });
});
