import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHostFs } from "../host/index.ts";
import type { HostFs } from "../host/index.ts";
import { BootstrapCaError, bootstrapRestConfig } from "./identity.ts";

describe("bootstrapRestConfig", () => {
  let root: string;
  let host: HostFs;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "gna-identity-"));
    host = createHostFs(root);
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  test("pins the CA to cluster-ca.crt and authenticates with the bootstrap token file", async () => {
    await host.writeFileAtomic("/var/lib/gardener-node-agent/cluster-ca.crt", "CA-PEM", 0o640);
    expect(await bootstrapRestConfig(host, "api.example.com/")).toEqual({
      server: "https://api.example.com",
      caFile: "/var/lib/gardener-node-agent/cluster-ca.crt",
      caPem: "CA-PEM",
      credentials: { kind: "tokenFile", path: join(root, "var/lib/gardener-node-agent/credentials/bootstrap-token") },
    });
  });

  test("refuses to fall back to the system trust store without cluster-ca.crt", async () => {
    await expect(bootstrapRestConfig(host, "https://api.example.com")).rejects.toBeInstanceOf(BootstrapCaError);
  });
});
