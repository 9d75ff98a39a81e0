import { describe, expect, test } from "bun:test";
import { parseHostsToml } from "./hosts.ts";
import { RegistryError } from "./errors.ts";

describe("parseHostsToml", () => {
  test("should read what the OSC controller writes, keeping the mirror order", () => {
    const text =
      '# managed by gardener-node-agent\nserver = "https://registry.hub.docker.com"\n\n[host."https://10.10.10.100:8080"]\n  capabilities = ["pull","resolve"]\n\n[host."https://10.10.10.200:8080"]\n  capabilities = ["pull"]\n  ca = ["/var/certs/ca.crt"]\n  override_path = true\n\n';
    expect(parseHostsToml(text)).toEqual({
      server: "https://registry.hub.docker.com",
      hosts: [
        { url: "https://10.10.10.100:8080", capabilities: ["pull", "resolve"], overridePath: false, ca: [] },
        { url: "https://10.10.10.200:8080", capabilities: ["pull"], overridePath: true, ca: ["/var/certs/ca.crt"] },
      ],
    });
  });

  test("should default capabilities and accept a single ca string", () => {
    expect(parseHostsToml('[host."http://m"]\nca = "rel.pem"\n')).toEqual({
      server: undefined,
      hosts: [{ url: "http://m", capabilities: ["pull", "resolve"], overridePath: false, ca: ["rel.pem"] }],
    });
  });

  test.each(["server = [", "server = 1", '[host."x"]\ncapabilities = ["fly"]'])("should reject %p", (text) => {
    expect(() => parseHostsToml(text)).toThrow(RegistryError);
  });
});
