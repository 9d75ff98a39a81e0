import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildOciLayout } from "../../oci/layout.ts";
import { pushOciLayout } from "../../oci/push-layout.ts";
import { createTransport, sha256Digest } from "../../src/registry/index.ts";
import { initScriptForUserData } from "../../src/render/index.ts";
import { fakeElf, startRegistry, writeTestLayout } from "../doubles/registry/index.ts";
import type { RegistryDouble } from "../doubles/registry/index.ts";
import { selfSignedCert } from "../doubles/self-signed.ts";

const INIT_SH = join(import.meta.dir, "../../cloud-init/init.sh");
const amd64 = fakeElf("amd64", 400_000, 11);
const arm64 = fakeElf("arm64", 400_000, 12);
let dir: string;
let registry: RegistryDouble;
let tagRef: string;
let digestRef: string;
let runs = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "gna-init-sh-"));
  registry = await startRegistry();
  await buildOciLayout({
    binaries: { amd64, arm64 },
    outDir: join(dir, "oci"),
    version: "v9.9.9",
    revision: "r",
    created: "2026-01-01T00:00:00Z",
    source: "s",
  });
  tagRef = `${registry.host}/gardener/node-agent:v9.9.9`;
  digestRef = (await pushOciLayout(join(dir, "oci"), tagRef, createTransport({ plainHttpHosts: [registry.host] }))).reference;
});
afterAll(async () => {
  await registry?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs init.sh with dash into a fresh temp root (async: the registry doubles live in this process). */
async function runInit(image: string, env: Record<string, string> = {}, root = join(dir, `root-${++runs}`), script = INIT_SH) {
  mkdirSync(root, { recursive: true });
  const proc = Bun.spawn(["dash", script], {
    env: {
      PATH: process.env["PATH"] ?? "/usr/bin:/bin",
      GNA_IMAGE: image,
      GNA_ROOT: root,
      GNA_EXEC: "0",
      GNA_REGISTRY_PLAIN_HTTP: "1",
      ...env,
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return { code, stdout, stderr, root, bin: join(root, "opt/bin/gardener-node-agent") };
}

describe("cloud-init/init.sh", () => {
  test("should install the amd64 binary by tag with mode 0755", async () => {
    const r = await runInit(tagRef);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(sha256Digest(readFileSync(r.bin))).toBe(sha256Digest(amd64));
    expect(statSync(r.bin).mode & 0o7777).toBe(0o755);
    expect(readdirSync(join(r.root, "opt/bin"))).toEqual(["gardener-node-agent"]);
  });

  test("should install the binary as well in the compacted form user data carries", async () => {
    const compacted = join(dir, "init-compacted.sh");
    writeFileSync(compacted, initScriptForUserData(readFileSync(INIT_SH, "utf8"), { registryCa: false, verifySignature: true }));
    const r = await runInit(digestRef, { GNA_ARCH: "aarch64" }, undefined, compacted);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(sha256Digest(readFileSync(r.bin))).toBe(sha256Digest(arm64));
  });

  test("should install by digest and pick arm64 on an aarch64 machine", async () => {
    const r = await runInit(digestRef, { GNA_ARCH: "aarch64" });
    expect(r.code).toBe(0);
    expect(sha256Digest(readFileSync(r.bin))).toBe(sha256Digest(arm64));
  });

  test("should take the binary from /ko-app/gardener-node-agent when /gardener-node-agent is absent", async () => {
    const layout = writeTestLayout(join(dir, "ko"), [
      {
        architecture: "amd64",
        layers: [{ compression: "gzip", files: [{ path: "./ko-app/gardener-node-agent", data: amd64, mode: 0o555, mtime: 0 }] }],
      },
    ]);
    const image = `${registry.host}/ko/agent:v1`;
    await pushOciLayout(layout, image, createTransport({ plainHttpHosts: [registry.host] }));
    const r = await runInit(image);
    expect(r.code).toBe(0);
    expect(sha256Digest(readFileSync(r.bin))).toBe(sha256Digest(amd64));
    expect(statSync(r.bin).mode & 0o7777).toBe(0o755);
  });

  test("should exec the installed binary with bootstrap and the config dir", async () => {
    const script = new TextEncoder().encode('#!/bin/sh\nprintf "%s\\n" "$@" > "$GNA_ROOT/args"\n');
    const layout = writeTestLayout(join(dir, "exec"), [
      {
        architecture: "amd64",
        layers: [{ compression: "gzip", files: [{ path: "gardener-node-agent", data: script, mode: 0o755, mtime: 0 }] }],
      },
    ]);
    const image = `${registry.host}/exec/agent:v1`;
    await pushOciLayout(layout, image, createTransport({ plainHttpHosts: [registry.host] }));
    const r = await runInit(image, { GNA_EXEC: "1" });
    expect(r.code).toBe(0);
    expect(readFileSync(join(r.root, "args"), "utf8")).toBe(`bootstrap\n--config-dir=${r.root}/var/lib/gardener-node-agent\n`);
  });

  test("should fail with one line and keep the old binary when a layer is corrupted", async () => {
    const proxy = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(req) {
        const url = new URL(req.url);
        const upstream = await fetch(`${registry.url}${url.pathname}${url.search}`, { method: req.method, headers: req.headers });
        if (!url.pathname.includes("/blobs/")) return upstream;
        const body = new Uint8Array(await upstream.arrayBuffer());
        body[body.length >> 1] = (body[body.length >> 1] ?? 0) ^ 0xff;
        return new Response(body, { status: upstream.status, headers: { "content-type": "application/octet-stream" } });
      },
    });
    try {
      const root = join(dir, "corrupt");
      mkdirSync(join(root, "opt/bin"), { recursive: true });
      writeFileSync(join(root, "opt/bin/gardener-node-agent"), "old binary", { mode: 0o755 });
      const r = await runInit(`127.0.0.1:${proxy.port}/gardener/node-agent:v9.9.9`, {}, root);
      expect(r.code).not.toBe(0);
      expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
      expect(r.stderr).toStartWith("init.sh: digest mismatch for layer sha256:");
      expect(readFileSync(r.bin, "utf8")).toBe("old binary");
      expect(readdirSync(join(root, "opt/bin"))).toEqual(["gardener-node-agent"]);
    } finally {
      await proxy.stop(true);
    }
  });

  test.each([
    [
      "an unknown tag",
      () => `${registry.host}/gardener/node-agent:nope`,
      "x86_64",
      /^init\.sh: GET http:\/\/.*\/manifests\/nope failed with HTTP 404\n$/,
    ],
    [
      "an unreachable registry",
      () => "127.0.0.1:1/x:v1",
      "x86_64",
      /^init\.sh: cannot reach http:\/\/127\.0\.0\.1:1\/v2\/x\/manifests\/v1: curl: \(7\)[^\n]*\n$/,
    ],
    // The ko image of the test above is amd64-only.
    [
      "a missing platform",
      () => `${registry.host}/ko/agent:v1`,
      "aarch64",
      /^init\.sh: image .*\/ko\/agent:v1 has no manifest for linux\/arm64\n$/,
    ],
    ["an unsupported machine", () => tagRef, "riscv64", /^init\.sh: unsupported machine architecture/],
    // The template as it is (no __IMAGE__ filled in) and no GNA_IMAGE.
    ["an unrendered template", () => "", "x86_64", /^init\.sh: no image reference\n$/],
  ])("should fail with one clear line for %s and install nothing", async (_, image, arch, message) => {
    const r = await runInit(image(), { GNA_ARCH: arch });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(message);
    expect(readdirSync(r.root)).toEqual([]);
  });
});

describe("cloud-init/init.sh registry CA block", () => {
  test("should install the registry CA from the API server, and fail when the ConfigMap is missing", async () => {
    const certDir = join(dir, "api-tls");
    mkdirSync(certDir);
    selfSignedCert({
      commonName: "api",
      altNames: ["IP:127.0.0.1"],
      keyPath: join(certDir, "key.pem"),
      certPath: join(certDir, "cert.pem"),
    });
    const pem = "-----BEGIN CERTIFICATE-----\nMIIBregistry\n-----END CERTIFICATE-----\n";
    const seen: (string | null)[] = [];
    let configMap: object | undefined = { kind: "ConfigMap", data: { "bundle.crt": Buffer.from(pem).toString("base64") } };
    const api = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      tls: { cert: readFileSync(join(certDir, "cert.pem"), "utf8"), key: readFileSync(join(certDir, "key.pem"), "utf8") },
      fetch(req) {
        seen.push(req.headers.get("authorization"));
        if (new URL(req.url).pathname !== "/api/v1/namespaces/kube-system/configmaps/registry-ca-bundle" || configMap === undefined)
          return new Response("{}", { status: 404 });
        return Response.json(configMap);
      },
    });
    try {
      const prepare = (name: string) => {
        const root = join(dir, name);
        mkdirSync(join(root, "var/lib/gardener-node-agent/credentials"), { recursive: true });
        writeFileSync(join(root, "var/lib/gardener-node-agent/cluster-ca.crt"), readFileSync(join(certDir, "cert.pem")));
        writeFileSync(join(root, "var/lib/gardener-node-agent/credentials/bootstrap-token"), "abcdef.0123456789abcdef\n");
        return root;
      };
      const env = { GNA_REGISTRY_CA_API_SERVER: `https://127.0.0.1:${api.port}` };
      const ok = await runInit(tagRef, env, prepare("ca-ok"));
      expect(ok.stderr).toBe("");
      expect(ok.stdout).toStartWith("> Registry CA configured\n");
      expect(readFileSync(join(ok.root, "var/lib/ca-certificates-local/registry-ca.crt"), "utf8")).toBe(pem);
      expect(readFileSync(join(ok.root, "etc/pki/trust/anchors/registry-ca.pem"), "utf8")).toBe(pem);
      expect(seen).toEqual(["Bearer abcdef.0123456789abcdef"]);

      configMap = undefined;
      const missing = await runInit(tagRef, env, prepare("ca-missing"));
      expect(missing.code).toBe(1);
      expect(missing.stderr).toStartWith("init.sh: cannot fetch configmap kube-system/registry-ca-bundle");
      expect(readdirSync(missing.root)).toEqual(["var"]);
    } finally {
      await api.stop(true);
    }
  });
});

describe("cloud-init/init.sh with bearer token auth", () => {
  let tokenRegistry: RegistryDouble;
  beforeAll(async () => {
    tokenRegistry = await startRegistry({ tokenAuth: true });
  });
  afterAll(async () => {
    await tokenRegistry?.stop();
  });

  test("should answer the Bearer challenge with an anonymous token and install the binary", async () => {
    const image = `${tokenRegistry.host}/gardener/node-agent:v9.9.9`;
    await pushOciLayout(join(dir, "oci"), image, createTransport({ plainHttpHosts: [tokenRegistry.host] }));
    const before = tokenRegistry.tokenServer!.requests.length;
    const r = await runInit(image);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(sha256Digest(readFileSync(r.bin))).toBe(sha256Digest(amd64));
    expect(tokenRegistry.tokenServer!.requests.slice(before)).toEqual([{ scope: "repository:gardener/node-agent:pull", basic: false }]);
  });
});
