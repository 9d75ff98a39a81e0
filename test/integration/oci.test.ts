import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildOciLayout } from "../../oci/layout.ts";
import { pushOciLayout } from "../../oci/push-layout.ts";
import { findInTar } from "../../src/registry/tar.ts";
import { createRegistryClient, createTransport, decompressLayer, sha256Digest } from "../../src/registry/index.ts";
import { fakeElf, startRegistry } from "../doubles/registry/index.ts";
import type { RegistryDouble } from "../doubles/registry/index.ts";

const amd64 = fakeElf("amd64", 300_000, 1);
const arm64 = fakeElf("arm64", 300_000, 2);
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "gna-oci-"));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const build = (out: string, created = "2026-01-01T00:00:00Z") =>
  buildOciLayout({
    binaries: { amd64, arm64 },
    outDir: join(dir, out),
    version: "v1.2.3",
    revision: "abc123",
    created,
    source: "https://example.invalid/gna",
  });

describe("oci layout", () => {
  test("should write an index with one manifest per platform, each with one gzip layer holding the binary", async () => {
    const result = await build("layout");
    const layout = join(dir, "layout");
    const blob = (d: string) => readFileSync(join(layout, "blobs/sha256", d.slice(7)));
    expect(JSON.parse(readFileSync(join(layout, "oci-layout"), "utf8"))).toEqual({ imageLayoutVersion: "1.0.0" });
    const top = JSON.parse(readFileSync(join(layout, "index.json"), "utf8"));
    expect(top.manifests[0].digest).toBe(result.indexDigest);
    expect(top.manifests[0].annotations["org.opencontainers.image.ref.name"]).toBe("v1.2.3");
    const index = JSON.parse(blob(result.indexDigest).toString());
    expect(index.mediaType).toBe("application/vnd.oci.image.index.v1+json");
    expect(index.annotations).toEqual({
      "org.opencontainers.image.created": "2026-01-01T00:00:00Z",
      "org.opencontainers.image.revision": "abc123",
      "org.opencontainers.image.source": "https://example.invalid/gna",
      "org.opencontainers.image.version": "v1.2.3",
    });
    expect(index.manifests.map((m: { platform: unknown }) => m.platform)).toEqual([
      { architecture: "amd64", os: "linux" },
      { architecture: "arm64", os: "linux" },
    ]);
    for (const [i, binary] of [amd64, arm64].entries()) {
      const manifest = JSON.parse(blob(index.manifests[i].digest).toString());
      expect(manifest.annotations["org.opencontainers.image.version"]).toBe("v1.2.3");
      expect(manifest.layers).toHaveLength(1);
      expect(manifest.layers[0].mediaType).toBe("application/vnd.oci.image.layer.v1.tar+gzip");
      const tar = decompressLayer(new Uint8Array(blob(manifest.layers[0].digest)), manifest.layers[0].mediaType);
      const config = JSON.parse(blob(manifest.config.digest).toString());
      expect(config.architecture).toBe(["amd64", "arm64"][i]);
      expect(config.os).toBe("linux");
      expect(config.rootfs).toEqual({ type: "layers", diff_ids: [sha256Digest(tar)] });
      const found = findInTar(tar, "/gardener-node-agent");
      expect(found.kind).toBe("file");
      if (found.kind === "file") {
        expect(found.mode).toBe(0o755);
        expect(sha256Digest(found.data)).toBe(sha256Digest(binary));
      }
    }
  });

  test("should be byte-identical for the same inputs and creation time", async () => {
    const a = await build("same-a");
    const b = await build("same-b");
    const c = await build("other-time", "2027-01-01T00:00:00Z");
    expect(b.indexDigest).toBe(a.indexDigest);
    expect(c.indexDigest).not.toBe(a.indexDigest);
    // Layers and configs do not depend on the time at all.
    const blobs = (d: string) => new Set(readdirSync(join(dir, d, "blobs/sha256")));
    const shared = [...blobs("same-a")].filter((x) => blobs("other-time").has(x));
    expect(shared).toHaveLength(4);
  });
});

describe("oci push", () => {
  let registry: RegistryDouble;
  beforeAll(async () => {
    registry = await startRegistry({ basicAuth: { username: "pusher", password: "s3cret" } });
  });
  afterAll(async () => {
    await registry?.stop();
  });

  test("should push with basic auth, pull back the amd64 binary, and upload nothing the second time", async () => {
    const result = await build("push");
    const options = { plainHttpHosts: [registry.host], credentials: { [registry.host]: { username: "pusher", password: "s3cret" } } };
    const first = await pushOciLayout(join(dir, "push"), `${registry.host}/gardener/node-agent:v1.2.3`, createTransport(options));
    expect(first.reference).toBe(`${registry.host}/gardener/node-agent@${result.indexDigest}`);
    expect(first.uploadedBlobs).toBe(4);
    expect(first.uploadedManifests).toBe(3);
    const second = await pushOciLayout(join(dir, "push"), `${registry.host}/gardener/node-agent:v1.2.3`, createTransport(options));
    expect(second).toEqual({ ...first, uploadedBlobs: 0, uploadedManifests: 0, uploadedBytes: 0 });

    const client = createRegistryClient(options);
    for (const image of [`${registry.host}/gardener/node-agent:v1.2.3`, first.reference]) {
      const resolved = await client.resolve(image, { os: "linux", architecture: "amd64" });
      expect(resolved.layers).toHaveLength(1);
      const layer = resolved.layers[0]!;
      const tar = decompressLayer(await client.fetchBlob(resolved.reference, layer.digest), layer.mediaType);
      const found = findInTar(tar, "gardener-node-agent");
      expect(found.kind === "file" && sha256Digest(found.data)).toBe(sha256Digest(amd64));
    }
  });

  test("should build and push through the make oci / make push entry points", async () => {
    const dist = join(dir, "dist");
    mkdirSync(dist);
    writeFileSync(join(dist, "gardener-node-agent-linux-amd64"), amd64);
    writeFileSync(join(dist, "gardener-node-agent-linux-arm64"), arm64);
    const run = async (args: string[], env: Record<string, string> = {}) => {
      const proc = Bun.spawn([process.execPath, "run", ...args], {
        cwd: join(import.meta.dir, "../.."),
        env: { PATH: process.env["PATH"] ?? "", ...env },
        stdout: "pipe",
        stderr: "pipe",
      });
      const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
      return { code, stdout, stderr };
    };
    const build = () =>
      run(["oci/build.ts", "--version", "v7.0.0", "--revision", "cafe", "--dist", dist], { SOURCE_DATE_EPOCH: "1767225600" });
    const first = await build();
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(
      /^layer linux\/amd64: tar 0\.3 MiB → gzip \d+\.\d MiB\nlayer linux\/arm64: .*\nimage index sha256:[0-9a-f]{64} written to /,
    );
    const again = await build();
    expect(again.stdout).toBe(first.stdout); // SOURCE_DATE_EPOCH makes the whole layout reproducible
    const index = JSON.parse(readFileSync(join(dist, "oci/blobs/sha256", first.stdout.match(/sha256:([0-9a-f]{64})/)![1]!), "utf8"));
    expect(index.annotations["org.opencontainers.image.created"]).toBe("2026-01-01T00:00:00Z");

    const target = `${registry.host}/gardener/node-agent:v7.0.0`;
    const pushed = await run(["oci/push.ts", join(dist, "oci"), target], { REGISTRY_USERNAME: "pusher", REGISTRY_PASSWORD: "s3cret" });
    expect(pushed.code).toBe(0);
    expect(pushed.stdout).toBe(`${registry.host}/gardener/node-agent@sha256:${first.stdout.match(/sha256:([0-9a-f]{64})/)![1]}\n`);
    const denied = await run(["oci/push.ts", join(dist, "oci"), target]);
    expect(denied.code).toBe(1);
    expect(denied.stderr).toStartWith("push failed: ");
  });

  test("should fail with a clear error when the credentials are wrong", async () => {
    await build("push-bad");
    const transport = createTransport({
      plainHttpHosts: [registry.host],
      credentials: { [registry.host]: { username: "pusher", password: "wrong" } },
    });
    await expect(pushOciLayout(join(dir, "push-bad"), `${registry.host}/gardener/node-agent:bad`, transport)).rejects.toThrow(/HTTP 401/);
  });
});
