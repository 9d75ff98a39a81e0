import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pushOciLayout } from "../../oci/push-layout.ts";
import { createHostFs } from "../../src/host/index.ts";
import {
  createRegistryClient,
  createTransport,
  DigestMismatchError,
  extractFileFromImage,
  FileNotInImageError,
  loadRegistryCredentials,
  RegistryAuthConfigError,
  registryAuthPath,
  RegistryError,
  RegistryHttpError,
  RegistryUnreachableError,
} from "../../src/registry/index.ts";
import type { FetchFn, RegistryClientOptions } from "../../src/registry/index.ts";
import { fakeElf, startRegistry, writeTestLayout } from "../doubles/registry/index.ts";
import type { RegistryDouble, TestPlatformImage } from "../doubles/registry/index.ts";

const amd64 = { os: "linux", architecture: "amd64" } as const;
const arm64 = { os: "linux", architecture: "arm64" } as const;
const bin = fakeElf("amd64", 100_000, 7);
const armBin = fakeElf("arm64", 100_000, 8);
const file = (path: string, data: Uint8Array | string, mode = 0o755) => ({
  path,
  data: typeof data === "string" ? new TextEncoder().encode(data) : data,
  mode,
  mtime: 0,
});

let dir: string;
let n = 0;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "gna-registry-test-"));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Pushes a test image; returns the tag reference and the digest reference. */
async function push(registry: RegistryDouble, images: readonly TestPlatformImage[], options: RegistryClientOptions = {}, single = false) {
  const layout = writeTestLayout(join(dir, `layout-${++n}`), images, single);
  const tagRef = `${registry.host}/test/image${n}:v${n}`;
  const result = await pushOciLayout(layout, tagRef, createTransport({ plainHttpHosts: [registry.host], ...options }));
  return { tagRef, digestRef: result.reference };
}

function countingFetch(): { fetch: FetchFn; calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    fetch: (input, init) => {
      calls.push(`${init?.method ?? "GET"} ${String(input)}`);
      return fetch(input, init);
    },
  };
}

describe("registry client against docker-registry (anonymous)", () => {
  let registry: RegistryDouble;
  beforeAll(async () => {
    registry = await startRegistry();
  });
  afterAll(async () => {
    await registry?.stop();
  });

  test("should pick the platform's manifest from an index", async () => {
    const { tagRef } = await push(registry, [
      { architecture: "amd64", layers: [{ compression: "gzip", files: [file("gardener-node-agent", bin)] }] },
      { architecture: "arm64", layers: [{ compression: "gzip", files: [file("gardener-node-agent", armBin)] }] },
    ]);
    const registryClient = createRegistryClient({ plainHttpHosts: [registry.host] });
    const got = await extractFileFromImage({
      registry: registryClient,
      cacheDir: "/cache",
      image: tagRef,
      filePathInImage: "/gardener-node-agent",
      platform: arm64,
    });
    expect(got.data).toEqual(armBin);
    expect(got.mode).toBe(0o755);
    await expect(registryClient.resolve(tagRef, { os: "linux", architecture: "ppc64le" })).rejects.toThrow(
      /no manifest for linux\/ppc64le/,
    );
  });

  test("should read a single-platform manifest without an index, from a zstd layer", async () => {
    const { tagRef } = await push(
      registry,
      [{ architecture: "amd64", layers: [{ compression: "zstd", files: [file("./usr/bin/tool", bin, 0o750)] }] }],
      {},
      true,
    );
    const registryClient = createRegistryClient({ plainHttpHosts: [registry.host] });
    const got = await extractFileFromImage({
      registry: registryClient,
      cacheDir: "/cache",
      image: tagRef,
      filePathInImage: "/usr/bin/tool",
      platform: amd64,
    });
    expect(got.data).toEqual(bin);
    expect(got.mode).toBe(0o750);
  });

  test("should let upper layers win, honour whiteouts and fall back to /ko-app/gardener-node-agent", async () => {
    const { tagRef } = await push(registry, [
      {
        architecture: "amd64",
        layers: [
          {
            compression: "gzip",
            files: [file("gardener-node-agent", "old"), file("etc/gone", "x"), file("ko-app/gardener-node-agent", bin)],
          },
          { compression: "none", files: [file("etc/.wh.gone", ""), file("etc/kept", "lower")] },
          { compression: "gzip", files: [file("etc/kept", "upper", 0o600), file(".wh.gardener-node-agent", "")] },
        ],
      },
    ]);
    const registryClient = createRegistryClient({ plainHttpHosts: [registry.host] });
    const get = (path: string) =>
      extractFileFromImage({ registry: registryClient, cacheDir: "/c", image: tagRef, filePathInImage: path, platform: amd64 });
    expect(new TextDecoder().decode((await get("/etc/kept")).data)).toBe("upper");
    expect((await get("/gardener-node-agent")).data).toEqual(bin);
    const gone = get("/etc/gone");
    await expect(gone).rejects.toBeInstanceOf(FileNotInImageError);
    await expect(get("/etc/missing")).rejects.toThrow(/file "\/etc\/missing" not found in image/);
  });

  test("should reject a blob whose bytes do not match its digest", async () => {
    const { tagRef } = await push(registry, [
      { architecture: "amd64", layers: [{ compression: "gzip", files: [file("gardener-node-agent", bin)] }] },
    ]);
    const registryClient = createRegistryClient({ plainHttpHosts: [registry.host] });
    const resolved = await registryClient.resolve(tagRef, amd64);
    const digest = resolved.layers[0]!.digest;
    const hex = digest.slice(7);
    writeFileSync(
      join(registry.storageDir, "docker/registry/v2/blobs/sha256", hex.slice(0, 2), hex, "data"),
      Bun.gzipSync(new Uint8Array([1, 2, 3])),
    );
    const err = await registryClient.fetchBlob(resolved.reference, digest).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DigestMismatchError);
    expect((err as DigestMismatchError).expected).toBe(digest);
  });

  test("should serve an unchanged image from the cache: tags re-resolve only, digests need no network", async () => {
    const root = join(dir, "cache-root");
    mkdirSync(root);
    const hostFs = createHostFs(root);
    const cachedBin = fakeElf("amd64", 50_000, 9); // a blob no other test tampers with
    const { tagRef, digestRef } = await push(registry, [
      { architecture: "amd64", layers: [{ compression: "gzip", files: [file("gardener-node-agent", cachedBin)] }] },
    ]);
    const counter = countingFetch();
    const registryClient = createRegistryClient({ plainHttpHosts: [registry.host], fetch: counter.fetch });
    const opts = {
      registry: registryClient,
      hostFs,
      cacheDir: "/var/lib/gardener-node-agent/tmp/image-cache",
      filePathInImage: "/gardener-node-agent",
      platform: amd64,
    };

    const first = await extractFileFromImage({ ...opts, image: tagRef });
    expect(first.cached).toBe(false);
    expect(counter.calls.filter((c) => c.includes("/blobs/"))).toHaveLength(1);
    counter.calls.length = 0;
    const second = await extractFileFromImage({ ...opts, image: tagRef });
    expect(second).toEqual({ ...first, cached: true });
    expect(counter.calls.every((c) => c.includes("/manifests/"))).toBe(true);

    await extractFileFromImage({ ...opts, image: digestRef });
    counter.calls.length = 0;
    const pinned = await extractFileFromImage({ ...opts, image: digestRef });
    expect(pinned.cached).toBe(true);
    expect(pinned.data).toEqual(cachedBin);
    expect(counter.calls).toEqual([]);
    const cacheDir = "/var/lib/gardener-node-agent/tmp/image-cache";
    expect((await hostFs.stat(cacheDir))?.mode).toBe(0o700);
    // One content file (mode from the image) and two small key files (manifest digest, pinned digest).
    const names = (await hostFs.list(cacheDir)) ?? [];
    expect(names).toHaveLength(3);
    const blobName = names.find((x) => x.includes("-blob-"))!;
    expect((await hostFs.stat(`${cacheDir}/${blobName}`))?.mode).toBe(0o755);

    // Damaged content is a miss, not a wrong answer.
    await hostFs.writeFileAtomic(`${cacheDir}/${blobName}`, "garbage", 0o755);
    const repaired = await extractFileFromImage({ ...opts, image: digestRef });
    expect(repaired.cached).toBe(false);
    expect(repaired.data).toEqual(cachedBin);

    // A new version under the same tag replaces the old entries of that repository and path.
    const newer = fakeElf("amd64", 50_000, 10);
    const layout = writeTestLayout(join(dir, "layout-newer"), [
      { architecture: "amd64", layers: [{ compression: "gzip", files: [file("gardener-node-agent", newer)] }] },
    ]);
    await pushOciLayout(layout, tagRef, createTransport({ plainHttpHosts: [registry.host] }));
    const updated = await extractFileFromImage({ ...opts, image: tagRef });
    expect(updated.cached).toBe(false);
    expect(updated.data).toEqual(newer);
    expect((await hostFs.list(cacheDir))?.filter((x) => x.includes("-blob-"))).toHaveLength(1);
    expect(await hostFs.list(cacheDir)).toHaveLength(2);
  });

  test("should refuse plain HTTP unless the host is listed", async () => {
    const registryClient = createRegistryClient();
    await expect(registryClient.resolve(`${registry.host}/test/none:v1`, amd64)).rejects.toBeInstanceOf(RegistryUnreachableError);
  });
});

describe("registry client with bearer token auth (docker-registry auth: token)", () => {
  let registry: RegistryDouble;
  const creds = { username: "robot", password: "t0ken" };
  beforeAll(async () => {
    registry = await startRegistry({ tokenAuth: true, tokenCredentials: creds });
  });
  afterAll(async () => {
    await registry?.stop();
  });

  test("should answer the challenge with a token fetched with basic credentials, per scope", async () => {
    const options = { plainHttpHosts: [registry.host], credentials: { [registry.host]: creds } };
    const { tagRef } = await push(
      registry,
      [{ architecture: "amd64", layers: [{ compression: "gzip", files: [file("gardener-node-agent", bin)] }] }],
      options,
    );
    const got = await extractFileFromImage({
      registry: createRegistryClient(options),
      cacheDir: "/c",
      image: tagRef,
      filePathInImage: "/gardener-node-agent",
      platform: amd64,
    });
    expect(got.data).toEqual(bin);
    const scopes = registry.tokenServer!.requests.map((r) => `${r.scope} ${r.basic}`);
    expect(scopes).toContain(`repository:test/image${n}:pull,push true`);
    expect(scopes).toContain(`repository:test/image${n}:pull true`);
  });

  test("should fetch the token with the docker config file's credentials", async () => {
    const root = join(dir, "token-auth-root");
    mkdirSync(root);
    const hostFs = createHostFs(root);
    await hostFs.writeFileAtomic(
      registryAuthPath,
      JSON.stringify({ auths: { [registry.host]: { auth: Buffer.from(`${creds.username}:${creds.password}`).toString("base64") } } }),
      0o600,
    );
    const { tagRef } = await push(
      registry,
      [{ architecture: "amd64", layers: [{ compression: "gzip", files: [file("gardener-node-agent", bin)] }] }],
      { credentials: { [registry.host]: creds } },
    );
    const before = registry.tokenServer!.requests.length;
    const client = createRegistryClient({ plainHttpHosts: [registry.host], credentialSource: () => loadRegistryCredentials(hostFs) });
    const got = await extractFileFromImage({
      registry: client,
      cacheDir: "/c",
      image: tagRef,
      filePathInImage: "/gardener-node-agent",
      platform: amd64,
    });
    expect(got.data).toEqual(bin);
    expect(registry.tokenServer!.requests.slice(before).map((r) => `${r.scope} ${r.basic}`)).toContain(
      `repository:test/image${n}:pull true`,
    );
  });

  test("should fail with HTTP 401 when the token server refuses anonymous requests", async () => {
    const err = await createRegistryClient({ plainHttpHosts: [registry.host] })
      .resolve(`${registry.host}/test/image1:v1`, amd64)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RegistryHttpError);
    expect((err as RegistryHttpError).status).toBe(401);
  });
});

describe("registry client with containerd hosts.toml mirrors", () => {
  let upstream: RegistryDouble;
  let mirror: RegistryDouble;
  beforeAll(async () => {
    [upstream, mirror] = await Promise.all([startRegistry(), startRegistry()]);
  });
  afterAll(async () => {
    await Promise.all([upstream?.stop(), mirror?.stop()]);
  });

  test("should pull from the first working mirror with the needed capability, then the server", async () => {
    const mirrored = fakeElf("amd64", 60_000, 21);
    const images = [{ architecture: "amd64", layers: [{ compression: "gzip" as const, files: [file("gardener-node-agent", mirrored)] }] }];
    // The same image under the same name on both; the upstream copy of the layer is then tampered with.
    const onMirror = await push(mirror, images);
    const layout = join(dir, `layout-${n}`);
    const name = onMirror.tagRef.slice(mirror.host.length + 1);
    await pushOciLayout(layout, `${upstream.host}/${name}`, createTransport({ plainHttpHosts: [upstream.host] }));
    const resolved = await createRegistryClient({ plainHttpHosts: [upstream.host] }).resolve(`${upstream.host}/${name}`, amd64);
    const hex = resolved.layers[0]!.digest.slice(7);
    writeFileSync(join(upstream.storageDir, "docker/registry/v2/blobs/sha256", hex.slice(0, 2), hex, "data"), "tampered");

    const root = join(dir, "mirror-root");
    mkdirSync(root);
    const hostFs = createHostFs(root);
    const hostsToml = (mirrors: string) => `# managed by gardener-node-agent\nserver = "http://${upstream.host}"\n${mirrors}\n`;
    const counter = countingFetch();
    const client = createRegistryClient({
      plainHttpHosts: [upstream.host],
      fetch: counter.fetch,
      hostsDir: { hostFs, dir: "/etc/containerd/certs.d" },
    });
    const get = () =>
      extractFileFromImage({
        registry: client,
        cacheDir: "/c",
        image: `${upstream.host}/${name}`,
        filePathInImage: "/gardener-node-agent",
        platform: amd64,
      });

    // A dead mirror first, then a pull-only mirror (override_path): tags resolve upstream, the blob comes from the mirror.
    await hostFs.writeFileAtomic(
      `/etc/containerd/certs.d/${upstream.host}/hosts.toml`,
      hostsToml(
        `\n[host."http://127.0.0.1:1"]\n  capabilities = ["pull","resolve"]\n\n[host."http://${mirror.host}/v2"]\n  capabilities = ["pull"]\n  override_path = true\n`,
      ),
      0o644,
    );
    expect((await get()).data).toEqual(mirrored);
    const hosts = counter.calls.map(
      (c) => new URL(c.split(" ")[1]!).host + (c.includes("/manifests/v") ? " tag" : c.includes("/blobs/") ? " blob" : " digest"),
    );
    expect(hosts).toEqual([
      "127.0.0.1:1 tag",
      `${upstream.host} tag`,
      "127.0.0.1:1 digest",
      `${mirror.host} digest`,
      "127.0.0.1:1 blob",
      `${mirror.host} blob`,
    ]);

    // Without mirrors the tampered upstream blob is refused.
    await hostFs.writeFileAtomic(`/etc/containerd/certs.d/${upstream.host}/hosts.toml`, hostsToml(""), 0o644);
    await expect(get()).rejects.toBeInstanceOf(DigestMismatchError);
  });
});

describe("registry client over TLS", () => {
  let registry: RegistryDouble;
  beforeAll(async () => {
    registry = await startRegistry({ tls: true });
  });
  afterAll(async () => {
    await registry?.stop();
  });

  test("should trust the configured CA and refuse the registry without it", async () => {
    const layout = writeTestLayout(join(dir, "layout-tls"), [
      { architecture: "amd64", layers: [{ compression: "gzip", files: [file("gardener-node-agent", bin)] }] },
    ]);
    const image = `${registry.host}/tls/agent:v1`;
    await pushOciLayout(layout, image, createTransport({ caPem: registry.caPem! }));
    const got = await extractFileFromImage({
      registry: createRegistryClient({ caPem: registry.caPem! }),
      cacheDir: "/c",
      image,
      filePathInImage: "/gardener-node-agent",
      platform: amd64,
    });
    expect(got.data).toEqual(bin);
    await expect(createRegistryClient().resolve(image, amd64)).rejects.toBeInstanceOf(RegistryUnreachableError);
  });
});

describe("registry transport", () => {
  test("should drop credentials when a blob redirects to another origin", async () => {
    const seen: { where: string; auth: string | null }[] = [];
    const storage = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(req) {
        seen.push({ where: "storage", auth: req.headers.get("authorization") });
        return new Response("blob-bytes");
      },
    });
    const api: Bun.Server<undefined> = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(req): Response {
        const url = new URL(req.url);
        if (url.pathname === "/token") return Response.json({ token: "tkn" });
        seen.push({ where: "api", auth: req.headers.get("authorization") });
        if (req.headers.get("authorization") !== "Bearer tkn") {
          return new Response("no", {
            status: 401,
            headers: { "www-authenticate": `Bearer realm="http://127.0.0.1:${api.port}/token",service="svc"` },
          });
        }
        return new Response(null, { status: 307, headers: { location: `http://127.0.0.1:${storage.port}/data` } });
      },
    });
    try {
      const host = `127.0.0.1:${api.port}`;
      const client = createRegistryClient({ plainHttpHosts: [host] });
      const digest = `sha256:${new Bun.CryptoHasher("sha256").update("blob-bytes").digest("hex")}`;
      const bytes = await client.fetchBlob({ registry: host, repository: "x/y" }, digest);
      expect(new TextDecoder().decode(bytes)).toBe("blob-bytes");
      expect(seen).toEqual([
        { where: "api", auth: null },
        { where: "api", auth: "Bearer tkn" },
        { where: "storage", auth: null },
      ]);
    } finally {
      await api.stop(true);
      await storage.stop(true);
    }
  });

  test("should report a typed error for an invalid reference", async () => {
    await expect(createRegistryClient().resolve("Bad Ref", amd64)).rejects.toBeInstanceOf(RegistryError);
  });
});

describe("registry client with docker config credentials (registry-auth.json)", () => {
  let registry: RegistryDouble;
  const creds = { username: "puller", password: "s3cret" };
  let root: string;
  beforeAll(async () => {
    registry = await startRegistry({ basicAuth: creds });
    root = join(dir, "auth-root");
    mkdirSync(root);
  });
  afterAll(async () => {
    await registry?.stop();
  });

  const authFile = (auths: Record<string, unknown>) => JSON.stringify({ auths });

  test("should pull from an htpasswd registry with the file's auth entry, and fail without it", async () => {
    const hostFs = createHostFs(root);
    const { tagRef } = await push(
      registry,
      [{ architecture: "amd64", layers: [{ compression: "gzip", files: [file("gardener-node-agent", bin)] }] }],
      { credentials: { [registry.host]: creds } },
    );
    const client = createRegistryClient({ plainHttpHosts: [registry.host], credentialSource: () => loadRegistryCredentials(hostFs) });
    const get = () =>
      extractFileFromImage({ registry: client, cacheDir: "/c", image: tagRef, filePathInImage: "/gardener-node-agent", platform: amd64 });

    const missing = await get().catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(RegistryHttpError);
    expect((missing as RegistryHttpError).message).toContain("wants basic auth and no credentials are configured");

    await hostFs.writeFileAtomic(
      registryAuthPath,
      authFile({ [`http://${registry.host}`]: { auth: Buffer.from(`${creds.username}:${creds.password}`).toString("base64") } }),
      0o600,
    );
    expect((await get()).data).toEqual(bin);

    // username/password fields work the same; a wrong password is a 401.
    const fresh = createRegistryClient({ plainHttpHosts: [registry.host], credentialSource: () => loadRegistryCredentials(hostFs) });
    await hostFs.writeFileAtomic(registryAuthPath, authFile({ [registry.host]: { username: creds.username, password: "wrong" } }), 0o600);
    const refused = await fresh.resolve(tagRef, amd64).catch((e: unknown) => e);
    expect((refused as RegistryHttpError).status).toBe(401);
  });

  test("should refuse a credentials file that others can read, naming the file but no secret", async () => {
    const hostFs = createHostFs(root);
    await hostFs.writeFileAtomic(registryAuthPath, authFile({ [registry.host]: { username: "u", password: "hidden" } }), 0o644);
    const client = createRegistryClient({ plainHttpHosts: [registry.host], credentialSource: () => loadRegistryCredentials(hostFs) });
    const err = await client.resolve(`${registry.host}/test/image1:v1`, amd64).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RegistryAuthConfigError);
    expect((err as Error).message).toBe(`${registryAuthPath}: mode 0644 gives group or others access to registry credentials, want 0600`);
    expect((err as Error).message).not.toContain("hidden");
  });

  test("should exchange an identitytoken at the token realm (OAuth2 refresh-token grant)", async () => {
    const grants: Record<string, string>[] = [];
    const api: Bun.Server<undefined> = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(req): Promise<Response> {
        const url = new URL(req.url);
        if (url.pathname === "/oauth2/token" && req.method === "POST") {
          const form = Object.fromEntries(new URLSearchParams(await req.text()));
          grants.push(form);
          return form["refresh_token"] === "rt-1" ? Response.json({ access_token: "at-1" }) : new Response("bad", { status: 401 });
        }
        if (req.headers.get("authorization") !== "Bearer at-1") {
          return new Response("no", {
            status: 401,
            headers: { "www-authenticate": `Bearer realm="http://127.0.0.1:${api.port}/oauth2/token",service="svc"` },
          });
        }
        return new Response("blob-bytes");
      },
    });
    try {
      const host = `127.0.0.1:${api.port}`;
      const hostFs = createHostFs(root);
      await hostFs.writeFileAtomic(registryAuthPath, authFile({ [host]: { identitytoken: "rt-1" } }), 0o600);
      const client = createRegistryClient({ plainHttpHosts: [host], credentialSource: () => loadRegistryCredentials(hostFs) });
      const digest = `sha256:${new Bun.CryptoHasher("sha256").update("blob-bytes").digest("hex")}`;
      const bytes = await client.fetchBlob({ registry: host, repository: "x/y" }, digest);
      expect(new TextDecoder().decode(bytes)).toBe("blob-bytes");
      expect(grants).toEqual([
        {
          grant_type: "refresh_token",
          refresh_token: "rt-1",
          client_id: "gardener-node-agent",
          service: "svc",
          scope: "repository:x/y:pull",
        },
      ]);
    } finally {
      await api.stop(true);
    }
  });
});
