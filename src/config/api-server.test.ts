import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHostFs } from "../host/index.ts";
import { ApiServerConfigError, readApiServerConfig } from "./api-server.ts";

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "gna-apiserver-"));
  mkdirSync(join(root, "var/lib/gardener-node-agent"), { recursive: true });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const put = (text: string) => writeFileSync(join(root, "var/lib/gardener-node-agent/config-v1.2.3.yaml"), text);
const read = () => readApiServerConfig({ fs: createHostFs(root), version: "v1.2.3" });

describe("readApiServerConfig", () => {
  test("should return server and caFile of a valid config", async () => {
    put(
      "apiVersion: nodeagent.config.gardener.cloud/v1alpha1\nkind: NodeAgentConfiguration\napiServer: {server: https://api, caFile: /ca.crt}\n",
    );
    expect(await read()).toEqual({ server: "https://api", caFile: "/ca.crt" });
  });

  test("should not validate the rest of the config", async () => {
    put("apiServer: {server: https://api, caFile: /ca.crt}\nlogFormat: xml\n");
    expect(await read()).toEqual({ server: "https://api", caFile: "/ca.crt" });
  });

  test("should report a missing file as a read error", async () => {
    let caught: unknown;
    await read().catch((err: unknown) => (caught = err));
    expect(caught).toBeInstanceOf(ApiServerConfigError);
    expect((caught as ApiServerConfigError).stage).toBe("read");
    expect((caught as Error).message).toStartWith("error reading gardener-node-agent config: ");
  });

  test("should report another kind as a decode error", async () => {
    put("kind: Invalid\n");
    let caught: unknown;
    await read().catch((err: unknown) => (caught = err));
    expect((caught as ApiServerConfigError).stage).toBe("decode");
    expect((caught as Error).message).toStartWith("error decoding gardener-node-agent config: ");
  });
});
