import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHostFs } from "../host/index.ts";
import { ConfigError } from "./errors.ts";
import { loadConfig } from "./load.ts";

const valid = "controllers: {operatingSystemConfig: {secretName: osc, kubernetesVersion: v1.33.0}}\n";
const dir = "/var/lib/gardener-node-agent";

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "gna-config-"));
  mkdirSync(join(root, dir), { recursive: true });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const put = (name: string, text: string) => writeFileSync(join(root, dir, name), text);
const load = (extra: { disableKubernetesVersionCheck?: boolean } = {}) =>
  loadConfig({ fs: createHostFs(root), configDir: dir, version: "v1.2.3", ...extra });
const failure = async (p: Promise<unknown>): Promise<ConfigError> => {
  try {
    await p;
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error("expected a ConfigError");
};

describe("loadConfig", () => {
  test("should read config-<version>.yaml from the config dir", async () => {
    put("config-v1.2.3.yaml", valid);
    put("config-v9.yaml", "logLevel: nope");
    const loaded = await load();
    expect(loaded.path).toBe("/var/lib/gardener-node-agent/config-v1.2.3.yaml");
    expect(loaded.warnings).toEqual([]);
    expect(loaded.config.controllers.operatingSystemConfig.secretName).toBe("osc");
  });

  test("should fall back to the only candidate with a warning naming it", async () => {
    put("config-v1.0.0.yaml", valid);
    const loaded = await load();
    expect(loaded.path).toBe("/var/lib/gardener-node-agent/config-v1.0.0.yaml");
    expect(loaded.warnings).toEqual([
      "Config file config-v1.2.3.yaml not found, using the only candidate /var/lib/gardener-node-agent/config-v1.0.0.yaml",
    ]);
  });

  test("should fail with the expected path when no config file exists", async () => {
    const err = await failure(load());
    expect(err.stage).toBe("read");
    expect(err.message).toBe("error reading config file: /var/lib/gardener-node-agent/config-v1.2.3.yaml: no such file or directory");
  });

  test("should list the candidates when several exist and none matches", async () => {
    put("config-v1.0.0.yaml", valid);
    put("config-v1.1.0.yaml", valid);
    const err = await failure(load());
    expect(err.message).toBe(
      "error reading config file: /var/lib/gardener-node-agent/config-v1.2.3.yaml: no such file or directory " +
        "(candidates: config-v1.0.0.yaml, config-v1.1.0.yaml; none matches version v1.2.3)",
    );
  });

  test("should fail with a decode error naming the file for another kind", async () => {
    put("config-v1.2.3.yaml", "kind: Invalid\n");
    const err = await failure(load());
    expect(err.stage).toBe("decode");
    expect(err.message).toStartWith("error decoding config: /var/lib/gardener-node-agent/config-v1.2.3.yaml: ");
  });

  test("should fail validation naming the file and the field path", async () => {
    put("config-v1.2.3.yaml", 'controllers: {operatingSystemConfig: {secretName: "", kubernetesVersion: v1.33.0}}\n');
    const err = await failure(load());
    expect(err.stage).toBe("validate");
    expect(err.issues).toEqual([
      {
        path: "controllers.operatingSystemConfig.secretName",
        type: "Required",
        detail: "must provide the secret name for the operating system config",
      },
    ]);
    expect(err.message).toBe(
      "invalid config: /var/lib/gardener-node-agent/config-v1.2.3.yaml: controllers.operatingSystemConfig.secretName: Required value: must provide the secret name for the operating system config",
    );
  });

  test("should honour the disabled version check", async () => {
    put("config-v1.2.3.yaml", "controllers: {operatingSystemConfig: {secretName: s, kubernetesVersion: 1.31.0}}\n");
    expect((await failure(load())).issues.map((i) => i.path)).toEqual(["controllers.operatingSystemConfig.kubernetesVersion"]);
    expect((await load({ disableKubernetesVersionCheck: true })).config.controllers.operatingSystemConfig.kubernetesVersion).toBe("1.31.0");
  });

  test("should refuse an empty config dir", async () => {
    const err = await failure(loadConfig({ fs: createHostFs(root), configDir: "", version: "v1" }));
    expect(err.message).toBe("error reading config file: missing config dir");
  });
});
