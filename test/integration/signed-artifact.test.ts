// Signed agent artifacts: `make push` signs like `cosign sign --key`; the agent (before it replaces its
// own binary) and init.sh (before the first start) accept only an image signed by cosign.pub.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildOciLayout } from "../../oci/layout.ts";
import { pushOciLayout } from "../../oci/push-layout.ts";
import { signImage } from "../../oci/sign.ts";
import { createHostFs } from "../../src/host/index.ts";
import {
  cosignSignatureTag,
  createAgentImageVerifier,
  createRegistryClient,
  createTransport,
  ImageSignatureError,
  importSigningKey,
  sha256Digest,
} from "../../src/registry/index.ts";
import { initScriptForUserData } from "../../src/render/index.ts";
import { fakeElf, startRegistry, type RegistryDouble } from "../doubles/registry/index.ts";
import { waitForEvent } from "../harness/events.ts";
import { startSandbox, type Sandbox } from "../harness/sandbox.ts";

const INIT_SH = join(import.meta.dir, "../../cloud-init/init.sh");
const good = { amd64: fakeElf("amd64", 120_000, 41), arm64: fakeElf("arm64", 120_000, 42) };
const evil = { amd64: fakeElf("amd64", 120_000, 43), arm64: fakeElf("arm64", 120_000, 44) };
let dir: string;
let registry: RegistryDouble;
let keyPem: string;
let pubPem: string;
let otherKeyPem: string;
/** Tag → what it is: signed by the key; re-pushed with other content under a copied signature; signed by another key; unsigned. */
const images = { signed: "", tampered: "", otherKey: "", unsigned: "" };

function openssl(...args: string[]): string {
  const r = Bun.spawnSync(["openssl", ...args]);
  if (r.exitCode !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

async function pushImage(name: string, binaries: Record<string, Uint8Array>, version: string): Promise<string> {
  const out = join(dir, `oci-${name}-${version}`);
  await buildOciLayout({ binaries, outDir: out, version, revision: "r", created: "2026-01-01T00:00:00Z", source: "s" });
  return (await pushOciLayout(out, `${registry.host}/gardener/${name}:v1`, transport())).reference;
}
const transport = () => createTransport({ plainHttpHosts: [registry.host] });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "gna-signed-"));
  registry = await startRegistry();
  openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", join(dir, "key.pem"));
  openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", join(dir, "other.pem"));
  keyPem = readFileSync(join(dir, "key.pem"), "utf8");
  otherKeyPem = readFileSync(join(dir, "other.pem"), "utf8");
  pubPem = openssl("pkey", "-in", join(dir, "key.pem"), "-pubout");
  const key = await importSigningKey(keyPem, "key.pem");

  const signed = await pushImage("signed", good, "v1");
  await signImage(signed, key, transport());
  images.signed = `${registry.host}/gardener/signed:v1`;

  // Signed, then the tag is moved to other content and the old signature copied to the new digest.
  const original = await pushImage("tampered", good, "v1");
  const { signatureTag } = await signImage(original, key, transport());
  const moved = await pushImage("tampered", evil, "v2");
  const sigManifest = await fetch(`${registry.url}/v2/gardener/tampered/manifests/${signatureTag.split(":").pop()}`, {
    headers: { accept: "application/vnd.oci.image.manifest.v1+json" },
  });
  const put = await fetch(`${registry.url}/v2/gardener/tampered/manifests/${cosignSignatureTag(moved.split("@")[1]!)}`, {
    method: "PUT",
    headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" },
    body: await sigManifest.arrayBuffer(),
  });
  expect(put.status).toBe(201);
  images.tampered = `${registry.host}/gardener/tampered:v1`;

  const byOther = await pushImage("other-key", good, "v1");
  await signImage(byOther, await importSigningKey(otherKeyPem, "other.pem"), transport());
  images.otherKey = `${registry.host}/gardener/other-key:v1`;

  await pushImage("unsigned", good, "v1");
  images.unsigned = `${registry.host}/gardener/unsigned:v1`;
});
afterAll(async () => {
  await registry?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("agent image verification (cosign key-based)", () => {
  test("should pin a signed image to its verified digest and refuse tampered, foreign-key and unsigned ones", async () => {
    const root = join(dir, "verify-root");
    mkdirSync(join(root, "var/lib/gardener-node-agent"), { recursive: true });
    const host = createHostFs(root);
    const verify = createAgentImageVerifier(createRegistryClient({ plainHttpHosts: [registry.host] }), host);
    expect(await verify(images.unsigned)).toBe(images.unsigned); // no key configured: no check
    writeFileSync(join(root, "var/lib/gardener-node-agent/cosign.pub"), pubPem);
    const pinned = await verify(images.signed);
    expect(pinned).toMatch(new RegExp(`^${registry.host}/gardener/signed@sha256:[0-9a-f]{64}$`));
    await expect(verify(images.tampered)).rejects.toThrow(/none of 1 signature\(s\) verifies with the configured key/);
    await expect(verify(images.otherKey)).rejects.toThrow(/none of 1 signature\(s\) verifies with the configured key/);
    const missing = await verify(images.unsigned).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ImageSignatureError);
    expect((missing as Error).message).toMatch(/has no signature \(no sha256-[0-9a-f]{64}\.sig tag\)$/);
  });
});

describe("oci/push.ts with COSIGN_KEY (make push)", () => {
  test("should push and sign so that the agent's verifier accepts the image", async () => {
    const layout = join(dir, "oci-cli");
    await buildOciLayout({ binaries: good, outDir: layout, version: "v3", revision: "r", created: "2026-01-01T00:00:00Z", source: "s" });
    const target = `${registry.host}/gardener/cli:v3`;
    const push = Bun.spawnSync([process.execPath, "run", join(import.meta.dir, "../../oci/push.ts"), layout, target], {
      env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", COSIGN_KEY: join(dir, "key.pem") },
    });
    expect(push.stderr.toString()).toMatch(/signed as .*\/gardener\/cli:sha256-[0-9a-f]{64}\.sig\n$/);
    expect(push.exitCode).toBe(0);
    const root = join(dir, "cli-root");
    mkdirSync(join(root, "var/lib/gardener-node-agent"), { recursive: true });
    writeFileSync(join(root, "var/lib/gardener-node-agent/cosign.pub"), pubPem);
    const verify = createAgentImageVerifier(createRegistryClient({ plainHttpHosts: [registry.host] }), createHostFs(root));
    expect(await verify(target)).toBe(push.stdout.toString().trim());
  });
});

async function runInit(image: string, root: string, script = INIT_SH) {
  const proc = Bun.spawn(["dash", script], {
    env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", GNA_IMAGE: image, GNA_ROOT: root, GNA_EXEC: "0", GNA_REGISTRY_PLAIN_HTTP: "1" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return { code, stdout, stderr, bin: join(root, "opt/bin/gardener-node-agent") };
}

function rootWithKey(name: string): string {
  const root = join(dir, name);
  mkdirSync(join(root, "var/lib/gardener-node-agent"), { recursive: true });
  mkdirSync(join(root, "opt/bin"), { recursive: true });
  writeFileSync(join(root, "var/lib/gardener-node-agent/cosign.pub"), pubPem);
  writeFileSync(join(root, "opt/bin/gardener-node-agent"), "old binary", { mode: 0o755 });
  return root;
}

describe("cloud-init/init.sh with cosign.pub (openssl)", () => {
  test("should install a signed image", async () => {
    const r = await runInit(images.signed, rootWithKey("init-signed"));
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^> Verified the signature of .*\/gardener\/signed:v1 \(sha256:[0-9a-f]{64}\)\n/);
    expect(sha256Digest(readFileSync(r.bin))).toBe(sha256Digest(good.amd64));
  });

  test.each([
    [
      "a tampered image",
      () => images.tampered,
      /^init\.sh: no signature of .*tampered:v1 \(sha256:[0-9a-f]{64}\) verifies with .*cosign\.pub\n$/,
    ],
    ["an image signed by another key", () => images.otherKey, /^init\.sh: no signature of .*other-key:v1 .* verifies with/],
    ["an unsigned image", () => images.unsigned, /^init\.sh: image .*unsigned:v1 \(sha256:[0-9a-f]{64}\) has no signature\n$/],
  ])("should exit non-zero and keep the old binary for %s", async (_, image, message) => {
    const r = await runInit(image(), rootWithKey(`init-${image().split("/")[2]!.split(":")[0]}`));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(message);
    expect(readFileSync(r.bin, "utf8")).toBe("old binary");
  });

  test("should verify as well in the compacted form user data carries", async () => {
    const compacted = join(dir, "init-compacted.sh");
    writeFileSync(compacted, initScriptForUserData(readFileSync(INIT_SH, "utf8"), { registryCa: false, verifySignature: true }));
    const signed = await runInit(images.signed, rootWithKey("init-compacted-signed"), compacted);
    expect(signed.stderr).toBe("");
    expect(signed.code).toBe(0);
    expect(sha256Digest(readFileSync(signed.bin))).toBe(sha256Digest(good.amd64));
    const tampered = await runInit(images.tampered, rootWithKey("init-compacted-tampered"), compacted);
    expect(tampered.code).not.toBe(0);
    expect(tampered.stderr).toMatch(/^init\.sh: no signature of .*tampered:v1 .* verifies with/);
    expect(readFileSync(tampered.bin, "utf8")).toBe("old binary");
  });
});

describe("cloud-init/init.sh rendered without --cosign-key", () => {
  test("should refuse to install when a cosign.pub is on the node anyway, and keep the old binary", async () => {
    const unverified = join(dir, "init-unverified.sh");
    writeFileSync(unverified, initScriptForUserData(readFileSync(INIT_SH, "utf8"), { registryCa: false, verifySignature: false }));
    const r = await runInit(images.signed, rootWithKey("init-unverified"), unverified);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^init\.sh: .*cosign\.pub exists; render user data with --cosign-key\n$/);
    expect(readFileSync(r.bin, "utf8")).toBe("old binary");
  });
});

describe("agent self-update with cosign.pub (whole binary)", () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox();
  });
  afterAll(async () => {
    await sb?.stop();
  });

  const osc = (image: string) => `apiVersion: extensions.gardener.cloud/v1alpha1
kind: OperatingSystemConfig
spec:
  files:
  - path: /opt/bin/gardener-node-agent
    permissions: 493
    content: {imageRef: {image: "${image}", filePathInImage: /gardener-node-agent}}
`;

  test("should keep its binary with a Warning for a tampered image and install the signed one", async () => {
    writeFileSync(join(sb.root, "var/lib/gardener-node-agent/cosign.pub"), pubPem);
    mkdirSync(join(sb.root, "opt/bin"), { recursive: true });
    writeFileSync(join(sb.root, "opt/bin/gardener-node-agent"), "old binary", { mode: 0o755 });
    const agent = sb.spawnAgent({ GARDENER_NODE_AGENT_PLAIN_HTTP_REGISTRIES: registry.host });
    try {
      sb.setOsc(osc(images.tampered));
      const warning = await waitForEvent(sb.sim, (e) => e.reason === "AgentImageSignatureInvalid", 30_000);
      expect(warning.type).toBe("Warning");
      expect(warning.message).toMatch(
        /^keeping the current agent binary: image .*tampered@sha256:[0-9a-f]{64}: none of 1 signature\(s\) verifies/,
      );
      expect(readFileSync(join(sb.root, "opt/bin/gardener-node-agent"), "utf8")).toBe("old binary");

      const checksum = sb.setOsc(osc(images.signed));
      await sb.waitForApplied(checksum, 30_000);
      expect(sha256Digest(readFileSync(join(sb.root, "opt/bin/gardener-node-agent")))).toBe(sha256Digest(good.amd64));
      expect(statSync(join(sb.root, "opt/bin/gardener-node-agent")).mode & 0o7777).toBe(0o755);
    } finally {
      await agent.stop();
    }
  }, 60_000);
});
