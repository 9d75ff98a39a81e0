// Whole binary: an imageRef file pulled from docker-registry with htpasswd authentication, using the
// docker-config credentials the same OSC delivers in /var/lib/gardener-node-agent/registry-auth.json
// (staging pulls with the pending version's file, before it is written).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pushOciLayout } from "../../oci/push-layout.ts";
import { createTransport } from "../../src/registry/index.ts";
import { fakeElf, startRegistry, writeTestLayout, type RegistryDouble } from "../doubles/registry/index.ts";
import { waitForEvent } from "../harness/events.ts";
import { startSandbox, type Sandbox } from "../harness/sandbox.ts";

const creds = { username: "node-puller", password: "pull-s3cret" };
const tool = fakeElf("amd64", 40_000, 31);
let registry: RegistryDouble;
let sb: Sandbox;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "gna-registry-auth-"));
  registry = await startRegistry({ basicAuth: creds });
  const layout = writeTestLayout(join(dir, "layout"), [
    { architecture: "amd64", layers: [{ compression: "gzip", files: [{ path: "tool", data: tool, mode: 0o755, mtime: 0 }] }] },
  ]);
  await pushOciLayout(
    layout,
    `${registry.host}/private/tool:v1`,
    createTransport({ plainHttpHosts: [registry.host], credentials: { [registry.host]: creds } }),
  );
  sb = await startSandbox();
});
afterAll(async () => {
  await sb?.stop();
  await registry?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const osc = (authJson: string | undefined) => `apiVersion: extensions.gardener.cloud/v1alpha1
kind: OperatingSystemConfig
spec:
  files:
${
  authJson === undefined
    ? ""
    : `  - path: /var/lib/gardener-node-agent/registry-auth.json
    permissions: 384
    content: {inline: {encoding: b64, data: ${Buffer.from(authJson).toString("base64")}}}
`
}  - path: /opt/bin/tool
    permissions: 493
    content: {imageRef: {image: "${registry.host}/private/tool:v1", filePathInImage: /tool}}
`;

describe("imageRef files from an authenticated registry (whole binary)", () => {
  test("should fail without credentials and pull with the registry-auth.json the OSC delivers", async () => {
    const agent = sb.spawnAgent({ GARDENER_NODE_AGENT_PLAIN_HTTP_REGISTRIES: registry.host });
    try {
      sb.setOsc(osc(undefined));
      await waitForEvent(
        sb.sim,
        // Staged before any gate (issue 23): the pull fails there, naming the image.
        (e) =>
          e.reason === "StagingFailed" &&
          e.message.includes(`image ${registry.host}/private/tool:v1`) &&
          e.message.includes("wants basic auth and no credentials are configured"),
        30_000,
      );
      const auth = JSON.stringify({
        auths: { [`http://${registry.host}`]: { auth: Buffer.from(`${creds.username}:${creds.password}`).toString("base64") } },
      });
      const checksum = sb.setOsc(osc(auth));
      await sb.waitForApplied(checksum, 30_000);
      const installed = new Uint8Array(await Bun.file(join(sb.root, "opt/bin/tool")).arrayBuffer());
      expect(Buffer.from(installed).equals(Buffer.from(tool))).toBe(true);
      expect(statSync(join(sb.root, "opt/bin/tool")).mode & 0o7777).toBe(0o755);
      expect(statSync(join(sb.root, "var/lib/gardener-node-agent/registry-auth.json")).mode & 0o7777).toBe(0o600);
      expect(agent.output()).not.toContain(creds.password);
    } finally {
      await agent.stop();
    }
  }, 60_000);
});
