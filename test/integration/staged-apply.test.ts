// Whole binary, issue 23: a pending version's imageRef and secretRef content is staged before any gate
// is asked, and the apply reads it from the stage (docker-registry stopped meanwhile). A staging failure
// asks no gate and takes no rollout slot; the stage is bounded and cleans up after a restart.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pushOciLayout } from "../../oci/push-layout.ts";
import { createTransport } from "../../src/registry/index.ts";
import { fakeElf, startRegistry, writeTestLayout, type RegistryDouble } from "../doubles/registry/index.ts";
import { eventually } from "../harness/eventually.ts";
import { agentBinary, startSandbox, type Sandbox } from "../harness/sandbox.ts";

type Plain = Record<string, unknown>;
const tool = fakeElf("amd64", 40_000, 7);
const helper = fakeElf("amd64", 30_000, 11);
let registry: RegistryDouble;
let dir: string;

async function push(tag: string, data: Uint8Array, name: string): Promise<void> {
  const layout = writeTestLayout(join(dir, `layout-${tag.replace(/[/:]/g, "-")}`), [
    { architecture: "amd64", layers: [{ compression: "gzip", files: [{ path: name, data, mode: 0o755, mtime: 0 }] }] },
  ]);
  await pushOciLayout(layout, `${registry.host}/${tag}`, createTransport({ plainHttpHosts: [registry.host] }));
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "gna-staged-"));
  registry = await startRegistry();
  await push("stage/tool:v1", tool, "tool");
  await push("stage/helper:v1", helper, "helper");
});
afterAll(async () => {
  await registry?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const plainHttp = () => ({ GARDENER_NODE_AGENT_PLAIN_HTTP_REGISTRIES: registry.host });
// A rollout slot verifies the node for 2 s instead of minutes.
const rolloutTimings = {
  GARDENER_NODE_AGENT_TIMINGS: "healthyFor=2s,verifyTimeout=90s,renewEvery=1s,staleAfter=6s,verifyPoll=500ms,unitCheckPeriod=1s",
};
const stageDir = (sb: Sandbox) => join(sb.root, "var/lib/gardener-node-agent/staged");
const versions = (sb: Sandbox): string[] =>
  existsSync(join(stageDir(sb), "versions")) ? readdirSync(join(stageDir(sb), "versions")).map((n) => n.replace(/\.json$/, "")) : [];
/**
 * The stage record as it is now, in one read of the file (the agent replaces it by rename). Bun.file's
 * exists() then json() failed once in a loaded full run with "Unexpected EOF" on a record being replaced.
 */
const record = async (sb: Sandbox, checksum: string): Promise<Plain | undefined> => {
  let text: string;
  try {
    text = await readFile(join(stageDir(sb), "versions", `${checksum}.json`), "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  return JSON.parse(text) as Plain;
};
const condition = (sb: Sandbox): Plain | undefined =>
  ((sb.node()?.["status"] as Plain | undefined)?.["conditions"] as Plain[] | undefined)?.find(
    (c) => c["type"] === "OperatingSystemConfigApplied",
  );
const annotate = (sb: Sandbox, values: Record<string, string | null>) =>
  sb.sim.store.patch("nodes", "", sb.nodeName, "merge", { metadata: { annotations: values } });
const metrics = async (sb: Sandbox) => (await fetch(`http://127.0.0.1:${sb.metricsPort}/metrics`)).text();
/** The binary's operator commands against the sandbox root (no systemd: status reports that and goes on). */
const cli = async (args: string[]) => {
  const p = Bun.spawn([agentBinary, ...args], {
    env: { PATH: process.env["PATH"] ?? "", DBUS_SYSTEM_BUS_ADDRESS: "unix:path=/nonexistent" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { stdout, stderr };
};
const bytesOf = async (path: string) => Buffer.from(await Bun.file(path).arrayBuffer());

const firstOsc = `apiVersion: extensions.gardener.cloud/v1alpha1
kind: OperatingSystemConfig
spec:
  files:
  - path: /etc/demo/hello
    permissions: 420
    content: {inline: {data: hello}}
`;
const imageOsc = (image: string, extra = "") => `apiVersion: extensions.gardener.cloud/v1alpha1
kind: OperatingSystemConfig
spec:
  files:
  - path: /etc/demo/hello
    permissions: 420
    content: {inline: {data: hello again}}
  - path: /opt/bin/tool
    permissions: 493
    content: {imageRef: {image: "${image}", filePathInImage: /tool}}
${extra}`;

describe("pre-staged applies (whole binary)", () => {
  test("a staging failure asks no gate, takes no rollout slot and touches nothing; once the image exists it is staged, takes its slot and is applied", async () => {
    const sb = await startSandbox();
    // The pool label on the Node is what lets the authorizer serve the pool's Lease (the rollout slots).
    sb.sim.store.patch("nodes", "", sb.nodeName, "merge", {
      metadata: { labels: { "worker.gardener.cloud/gardener-node-agent-secret-name": sb.secretName } },
    });
    const agent = sb.spawnAgent({ ...plainHttp(), ...rolloutTimings });
    try {
      await sb.waitForApplied(sb.setOsc(firstOsc));
      annotate(sb, { "node-agent.gardener.cloud/rollout-parallelism": "1" });
      const missing = `${registry.host}/stage/late:v1`;
      const checksum = sb.setOsc(imageOsc(missing));
      const cond = await eventually(
        "condition StagingFailed",
        () => (condition(sb)?.["reason"] === "StagingFailed" ? condition(sb) : undefined),
        {
          timeoutMs: 30_000,
        },
      );
      expect(cond?.["status"]).toBe("False");
      expect(String(cond?.["message"])).toContain(`image ${missing}`);
      expect((await record(sb, checksum))?.["state"]).toBe("failed");
      expect((await cli(["status", `--root=${sb.root}`])).stdout).toMatch(
        new RegExp(`staging of ${checksum.slice(0, 12)}: failed at \\S+: Staging operating system config \\w+ failed: image ${missing}`),
      );
      // Nothing of the new version on the host, and the rollout gate was never asked for a slot.
      expect(existsSync(join(sb.root, "opt/bin/tool"))).toBe(false);
      expect(await sb.readHostFile("/etc/demo/hello")).toBe("hello");
      const lease = sb.sim.store.get("leases", "kube-system", sb.secretName) as Plain | undefined;
      const slots = Object.keys(((lease?.["metadata"] as Plain | undefined)?.["annotations"] as Plain | undefined) ?? {});
      expect(slots.filter((k) => k.endsWith(sb.nodeName))).toEqual([]);
      expect(sb.node()?.["metadata"]).toMatchObject({ annotations: { "checksum/cloud-config-data": expect.not.stringMatching(checksum) } });

      // Retried with backoff: once the image is there the version is staged, the rollout gate takes
      // this node's slot and the apply installs the file from the stage.
      await push("stage/late:v1", tool, "tool");
      await eventually("the staged file installed", () => existsSync(join(sb.root, "opt/bin/tool")), { timeoutMs: 45_000 });
      expect((await bytesOf(join(sb.root, "opt/bin/tool"))).equals(Buffer.from(tool))).toBe(true);
      expect((await record(sb, checksum))?.["state"]).toBe("staged");
      const taken = sb.sim.store.get("leases", "kube-system", sb.secretName) as Plain | undefined;
      expect(Object.keys(((taken?.["metadata"] as Plain | undefined)?.["annotations"] as Plain | undefined) ?? {})).toContain(
        `slot.node-agent.gardener.cloud/${sb.nodeName}`,
      );
      // An OSC without units has no unit check to wait for: the rollout verifies on Ready alone and records it.
      await sb.waitForApplied(checksum);
    } finally {
      await agent.stop();
      await sb.stop();
    }
  }, 90_000);

  test("a stage over the size bound fails staging with the bound named, and the node stays on its version", async () => {
    const sb = await startSandbox({
      secretName: "osc-bounded",
      extraConfig: {
        controllers: { operatingSystemConfig: { secretName: "osc-bounded", kubernetesVersion: "1.33.0", stagingMaxBytes: 50_000 } },
      },
    });
    const agent = sb.spawnAgent(plainHttp());
    try {
      const first = sb.setOsc(firstOsc);
      await sb.waitForApplied(first);
      // 40 000 + 30 000 bytes: the second file would pass the 50 000-byte bound.
      const extra = `  - path: /opt/bin/helper
    permissions: 493
    content: {imageRef: {image: "${registry.host}/stage/helper:v1", filePathInImage: /helper}}
`;
      const checksum = sb.setOsc(imageOsc(`${registry.host}/stage/tool:v1`, extra));
      const cond = await eventually(
        "condition StagingFailed",
        () => (condition(sb)?.["reason"] === "StagingFailed" ? condition(sb) : undefined),
        {
          timeoutMs: 30_000,
        },
      );
      expect(String(cond?.["message"])).toContain("would exceed the stage size bound of 50000 bytes");
      expect(String(cond?.["message"])).toContain(`image ${registry.host}/stage/helper:v1`);
      // The failed version's blobs are gone; nothing was installed.
      expect(readdirSync(join(stageDir(sb), "blobs"))).toEqual([]);
      expect(existsSync(join(sb.root, "opt/bin/tool"))).toBe(false);
      expect((sb.node()?.["metadata"] as Plain)["annotations"]).toMatchObject({ "checksum/cloud-config-data": first });
      expect(checksum).not.toBe(first);
    } finally {
      await agent.stop();
      await sb.stop();
    }
  }, 90_000);

  test("a version whose only route to an image is the registry mirror it introduces stages and applies", async () => {
    const sb = await startSandbox();
    const agent = sb.spawnAgent(plainHttp());
    try {
      await sb.waitForApplied(sb.setOsc(firstOsc));
      // Nothing listens on 127.0.0.1:1: the image can only come through the mirror this version configures.
      const mirrored = `  criConfig:
    name: containerd
    containerd:
      registries:
      - upstream: "127.0.0.1:1"
        hosts:
        - url: "http://${registry.host}"
`;
      const checksum = sb.setOsc(imageOsc("127.0.0.1:1/stage/tool:v1", mirrored));
      await sb.waitForApplied(checksum, 60_000);
      expect((await record(sb, checksum))?.["state"]).toBe("staged");
      expect((await bytesOf(join(sb.root, "opt/bin/tool"))).equals(Buffer.from(tool))).toBe(true);
      expect(await sb.readHostFile("/etc/containerd/certs.d/127.0.0.1:1/hosts.toml")).toContain(`[host."http://${registry.host}"]`);
    } finally {
      await agent.stop();
      await sb.stop();
    }
  }, 90_000);

  test("a version staged while held applies with the registry stopped; stale stages go after a restart", async () => {
    const sb = await startSandbox();
    let agent = sb.spawnAgent(plainHttp());
    try {
      const first = sb.setOsc(firstOsc);
      await sb.waitForApplied(first);
      annotate(sb, { "node-agent.gardener.cloud/hold": "staging test" });
      sb.sim.store.create("secrets", {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "gardener-valitail", namespace: "kube-system" },
        data: { token: Buffer.from("s3cret-token").toString("base64") },
      });
      const secretFile = `  - path: /etc/demo/token
    permissions: 384
    content: {secretRef: {name: gardener-valitail, dataKey: token}}
`;
      const heldOsc = imageOsc(`${registry.host}/stage/tool:v1`, secretFile);
      const checksum = sb.setOsc(heldOsc);
      const staged = await eventually(
        "the held version staged",
        async () => {
          const rec = await record(sb, checksum);
          return rec?.["state"] === "staged" ? rec : undefined;
        },
        { timeoutMs: 30_000 },
      );
      expect((staged["files"] as Plain[]).map((f) => f["path"]).sort()).toEqual(["/etc/demo/token", "/opt/bin/tool"]);
      await eventually("condition Held", () => condition(sb)?.["reason"] === "Held", { timeoutMs: 30_000 });
      expect(statSync(stageDir(sb)).mode & 0o777).toBe(0o700);
      // status and diff say so.
      const status = await cli(["status", `--root=${sb.root}`]);
      expect(status.stdout).toContain(`staging of ${checksum.slice(0, 12)}: staged (2 file(s), 40012 bytes)`);
      const oscPath = join(dir, "held-osc.yaml");
      writeFileSync(oscPath, heldOsc);
      const diff = await cli(["diff", "--offline", `--root=${sb.root}`, oscPath]);
      expect(diff.stdout).toContain("Staging: staged (2 file(s), 40012 bytes)");
      expect(existsSync(join(sb.root, "opt/bin/tool"))).toBe(false);
      expect(existsSync(join(sb.root, "etc/demo/token"))).toBe(false);
      // The tool (40 000 bytes) and the token (12 bytes).
      expect(await metrics(sb)).toMatch(/^gardener_node_agent_staged_bytes 40012$/m);

      // No registry, and the file Secret gone: the apply has all it needs in the stage.
      await registry.stop();
      sb.sim.store.delete("secrets", "kube-system", "gardener-valitail");
      annotate(sb, { "node-agent.gardener.cloud/hold": null });
      await sb.waitForApplied(checksum, 30_000);
      expect((await bytesOf(join(sb.root, "opt/bin/tool"))).equals(Buffer.from(tool))).toBe(true);
      expect(await sb.readHostFile("/etc/demo/token")).toBe("s3cret-token");
      expect(versions(sb)).toEqual([checksum]);
      // Renamed into place: the live file is the blob's inode (no second copy), with the file's mode.
      const live = statSync(join(sb.root, "opt/bin/tool"));
      const blobs = readdirSync(join(stageDir(sb), "blobs")).map((n) => statSync(join(stageDir(sb), "blobs", n)).ino);
      expect([blobs.includes(live.ino), live.nlink, live.mode & 0o777]).toEqual([true, 2, 0o755]);
      await eventually("the gates-open-to-applied histogram", async () =>
        /gardener_node_agent_osc_gates_open_to_applied_seconds_count\{staged="true"\} 1$/m.test(await metrics(sb)),
      );

      // Stale stages (another version, an orphaned blob, a stray entry) go at the next start.
      await agent.stop();
      const stale = "ab".repeat(32);
      writeFileSync(
        join(stageDir(sb), "versions", `${stale}.json`),
        JSON.stringify({ checksum: stale, state: "staged", bytes: 3, at: "x", files: [] }),
      );
      writeFileSync(join(stageDir(sb), "blobs", `sha256-${"cd".repeat(32)}`), "old");
      mkdirSync(join(stageDir(sb), "leftover"));
      agent = sb.spawnAgent({});
      await eventually("stale stages removed", () => versions(sb).length === 1 && !existsSync(join(stageDir(sb), "leftover")), {
        timeoutMs: 30_000,
      });
      expect(versions(sb)).toEqual([checksum]);
      expect(readdirSync(join(stageDir(sb), "blobs")).some((n) => n.includes("cd".repeat(32)))).toBe(false);
    } finally {
      await agent.stop();
      await sb.stop();
    }
  }, 120_000);
});
