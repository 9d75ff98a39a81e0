import { describe, expect, test } from "bun:test";
import type { Osc } from "../../../../osc/index.ts";
import { injectEnvDropIn } from "../../plan/env-dropin.ts";
import { goQuote, hostsToml } from "./hosts-toml.ts";

describe("hostsToml", () => {
  test("should write the default-caps layout byte for byte", () => {
    expect(
      hostsToml({
        upstream: "_default",
        server: "https://registry.hub.docker.com",
        hosts: [{ url: "https://10.10.10.100:8080" }, { url: "https://10.10.10.200:8080" }],
      }),
    ).toBe(
      '# managed by gardener-node-agent\nserver = "https://registry.hub.docker.com"\n\n[host."https://10.10.10.100:8080"]\n  capabilities = ["pull","resolve"]\n\n[host."https://10.10.10.200:8080"]\n  capabilities = ["pull","resolve"]\n\n',
    );
  });

  test("should write capabilities, ca and override_path", () => {
    expect(
      hostsToml({
        upstream: "registry.k8s.io",
        server: "https://registry.k8s.io",
        hosts: [{ url: "https://10.10.10.101:8080", capabilities: ["pull"], caCerts: ["/var/certs/ca.crt"], overridePath: true }],
      }),
    ).toBe(
      '# managed by gardener-node-agent\nserver = "https://registry.k8s.io"\n\n[host."https://10.10.10.101:8080"]\n  capabilities = ["pull"]\n  ca = ["/var/certs/ca.crt"]\n  override_path = true\n\n',
    );
  });

  test("should omit server when empty and override_path when false", () => {
    expect(hostsToml({ upstream: "x", hosts: [{ url: "http://h", overridePath: false }] })).toBe(
      '# managed by gardener-node-agent\n[host."http://h"]\n  capabilities = ["pull","resolve"]\n\n',
    );
  });
});

describe("goQuote", () => {
  test.each([
    ["plain", '"plain"'],
    ['a"b\\c', '"a\\"b\\\\c"'],
    ["tab\tnl\n", '"tab\\tnl\\n"'],
    ["\x01", '"\\x01"'],
    ["ü", '"ü"'],
  ])("should quote %p as %p", (s, want) => {
    expect(goQuote(s)).toBe(want);
  });
});

describe("injectEnvDropIn", () => {
  const base = (units: Osc["spec"]["units"]): Osc => ({
    apiVersion: "a",
    kind: "k",
    spec: { type: "", purpose: "", ...(units ? { units } : {}) },
    status: {},
  });
  const content = '[Service]\nEnvironment="PATH=/var/bin/containerruntimes:/usr/bin:/bin"\n';

  test("should append to the first containerd.service spec unit", () => {
    const osc = injectEnvDropIn(
      base([{ name: "a" }, { name: "containerd.service", dropIns: [{ name: "x", content: "y" }] }, { name: "containerd.service" }]),
      "/usr/bin:/bin",
    );
    expect(osc.spec.units?.[1]?.dropIns).toEqual([
      { name: "x", content: "y" },
      { name: "30-env_config.conf", content },
    ]);
    expect(osc.spec.units?.[2]?.dropIns).toBeUndefined();
  });

  test("should add a containerd.service unit when there is none", () => {
    const osc = injectEnvDropIn(base(undefined), "/usr/bin:/bin");
    expect(osc.spec.units).toEqual([{ name: "containerd.service", dropIns: [{ name: "30-env_config.conf", content }] }]);
  });
});
