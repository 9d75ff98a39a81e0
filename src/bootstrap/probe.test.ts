import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { selfSignedCert } from "../../test/doubles/self-signed.ts";
import { createHostFs } from "../host/index.ts";
import type { HostFs } from "../host/index.ts";
import { createConnectivityProbe } from "./probe.ts";

describe("createConnectivityProbe", () => {
  let root: string;
  let host: HostFs;
  let server: ReturnType<typeof Bun.serve> | undefined;
  let seenAuth: string | null = null;
  let certDir: string;

  beforeAll(async () => {
    certDir = await mkdtemp(join(tmpdir(), "gna-probe-cert-"));
    selfSignedCert({
      commonName: "localhost",
      altNames: ["DNS:localhost", "IP:127.0.0.1"],
      keyPath: join(certDir, "key.pem"),
      certPath: join(certDir, "cert.pem"),
    });
    server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      tls: { cert: await readFile(join(certDir, "cert.pem"), "utf8"), key: await readFile(join(certDir, "key.pem"), "utf8") },
      fetch(req) {
        seenAuth = req.headers.get("authorization");
        return new URL(req.url).pathname === "/version" ? Response.json({ gitVersion: "v1.33.0" }) : new Response("", { status: 404 });
      },
    });
  });
  afterAll(async () => {
    await server?.stop(true);
    await rm(certDir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    seenAuth = null;
    root = await mkdtemp(join(tmpdir(), "gna-probe-"));
    host = createHostFs(root);
    await host.writeFileAtomic("/var/lib/gardener-node-agent/cluster-ca.crt", await readFile(join(certDir, "cert.pem")), 0o640);
    await host.writeFileAtomic("/var/lib/gardener-node-agent/credentials/bootstrap-token", "abcdef.0123456789abcdef\n", 0o640);
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  test("succeeds with the CA file and sends the trimmed bootstrap token", async () => {
    const probe = createConnectivityProbe({
      host,
      loadEndpoint: async () => ({ server: `https://127.0.0.1:${server?.port}`, caFile: "/var/lib/gardener-node-agent/cluster-ca.crt" }),
    });
    await probe(AbortSignal.timeout(5000));
    expect(seenAuth).toBe("Bearer abcdef.0123456789abcdef");
  });

  test("fails when the CA file is missing", async () => {
    const probe = createConnectivityProbe({
      host,
      loadEndpoint: async () => ({ server: `https://localhost:${server?.port}`, caFile: "/var/lib/gardener-node-agent/missing.crt" }),
    });
    await expect(probe(AbortSignal.timeout(5000))).rejects.toThrow("CA file /var/lib/gardener-node-agent/missing.crt does not exist");
  });

  test("fails when the server certificate is not signed by the CA file", async () => {
    const other = selfSignedCert({ commonName: "other-ca", keyPath: "/dev/null", certPath: join(certDir, "other-ca.pem") });
    await host.writeFileAtomic("/other-ca.crt", other, 0o644);
    const probe = createConnectivityProbe({
      host,
      loadEndpoint: async () => ({ server: `https://127.0.0.1:${server?.port}`, caFile: "/other-ca.crt" }),
    });
    await expect(probe(AbortSignal.timeout(5000))).rejects.toThrow('Get "https://127.0.0.1:');
    expect(seenAuth).toBeNull();
  });

  test("fails when nothing listens at the server address", async () => {
    const probe = createConnectivityProbe({
      host,
      loadEndpoint: async () => ({ server: "https://127.0.0.1:1", caFile: "/var/lib/gardener-node-agent/cluster-ca.crt" }),
    });
    await expect(probe(AbortSignal.timeout(5000))).rejects.toThrow('Get "https://127.0.0.1:1/version"');
  });
});
