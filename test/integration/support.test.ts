// `support` of the compiled binary: a bundle from a sandbox node with every kind of secret planted
// (files, credentials, journal lines) and none of them in the unpacked bundle; the manifest; the size
// bound keeping the newest journal entries; the API server down; an image root made by apply --offline.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { sampleOsc } from "../demo/sample-osc.ts";
import { type JournalSeed, writeJournal } from "../doubles/systemd/index.ts";
import { agentBinary, agentEnv, startSandbox, type Sandbox } from "../harness/sandbox.ts";

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Spawned asynchronously: the simulator and the systemd double answer from this very process. */
const run = async (args: string[], env: Record<string, string>, cwd?: string): Promise<Run> => {
  const p = Bun.spawn([agentBinary, ...args], { env, stdout: "pipe", stderr: "pipe", ...(cwd !== undefined ? { cwd } : {}) });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr };
};

/** Unpacks a bundle with tar(1) and returns its one top directory and every member's text by path. */
async function unpack(bundle: string): Promise<{ top: string; files: Map<string, string> }> {
  const dir = await mkdtemp(join(tmpdir(), "support-unpacked-"));
  const tar = Bun.spawnSync(["tar", "-xzf", bundle, "-C", dir]);
  expect(tar.exitCode).toBe(0);
  const tops = await readdir(dir);
  expect(tops).toHaveLength(1);
  const top = tops[0] ?? "";
  const files = new Map<string, string>();
  const walk = async (rel: string): Promise<void> => {
    for (const e of await readdir(join(dir, top, rel), { withFileTypes: true })) {
      const p = rel === "" ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) await walk(p);
      else files.set(p, await readFile(join(dir, top, p), "utf8"));
    }
  };
  await walk("");
  await rm(dir, { recursive: true, force: true });
  return { top, files };
}

/** Secrets planted on the node, each unique so a grep finds it anywhere. */
const planted = {
  secretRef: "sr-PLANT-7f3a9c1e5b",
  mode600: "m6-PLANT-2b8d4e6f1a",
  tokenFile: "tk-PLANT-9c0d1e2f3a4b",
  kubeletToken: "kc-PLANT-5a6b7c8d9e0f",
  registryPassword: "ra-PLANT-pw-6y7u8i9o",
  registryAuthPassword: "ra-PLANT-1q2w3e4r5t",
  bootstrapToken: "07401b.f395accd246ae52d",
  bearer: "br-PLANT-AbCdEf123456",
  jwt: "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJQTEFOVCJ9.c2lnbmF0dXJlUExBTlQ",
  passwordShape: "pw-PLANT-zx81q",
  privateKey: "pk-PLANT-MIIEvQIBADANBg",
};

const oscWithSecrets = `${sampleOsc({ greeting: "hello" })}  - path: /etc/app/creds.conf
    permissions: 0644
    content:
      secretRef: {name: app-credentials, dataKey: token}
  - path: /etc/app/private.conf
    permissions: 0600
    content:
      inline:
        encoding: b64
        data: ${Buffer.from(`api-key ${planted.mode600}\n`).toString("base64")}
`;

let sb: Sandbox;
let env: Record<string, string>;
let clientKeyData = "";
const now = Date.now();
const minutesAgo = (m: number) => now - m * 60_000;

beforeAll(async () => {
  sb = await startSandbox({ nodeName: "support-node" });
  sb.sim.allowSecret(`machine-${sb.nodeName}`, "app-credentials");
  sb.sim.store.create("secrets", {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "app-credentials", namespace: "kube-system" },
    data: { token: Buffer.from(`${planted.secretRef}\n`).toString("base64") },
  });
  const agent = sb.spawnAgent();
  await sb.waitForApplied(sb.setOsc(oscWithSecrets));
  await agent.stop();
  env = agentEnv(sb.systemd.address, sb.nodeName);

  // Credentials a node has besides the agent's client-certificate kubeconfig.
  const state = join(sb.root, "var/lib/gardener-node-agent");
  await writeFile(join(state, "credentials/token"), `${planted.tokenFile}\n`, { mode: 0o600 });
  await writeFile(join(state, "credentials/bootstrap-token"), `${planted.bootstrapToken}\n`, { mode: 0o600 });
  const auth = Buffer.from(`robot:${planted.registryAuthPassword}`).toString("base64");
  await writeFile(
    join(state, "registry-auth.json"),
    JSON.stringify({ auths: { "reg.example": { auth, username: "robot2", password: planted.registryPassword } } }),
    { mode: 0o600 },
  );
  await mkdir(join(sb.root, "var/lib/kubelet"), { recursive: true });
  await writeFile(
    join(sb.root, "var/lib/kubelet/kubeconfig-real"),
    `apiVersion: v1\nkind: Config\nusers:\n- name: kubelet\n  user:\n    token: ${planted.kubeletToken}\n`,
    { mode: 0o600 },
  );
  const kubeconfig = parse(await readFile(join(state, "credentials/kubeconfig"), "utf8")) as {
    users: { user: { "client-key-data": string } }[];
  };
  clientKeyData = kubeconfig.users[0]?.user["client-key-data"] ?? "";
  expect(clientKeyData.length).toBeGreaterThan(100);

  // What the units (and systemd about them) logged: every secret above shows up in some line.
  const lines: [string, string][] = [
    ["kubelet.service", "kubelet started, version v1.33.0"],
    ["app.service", `read credentials ${planted.secretRef} from /etc/app/creds.conf`],
    ["greeter.service", `loaded key ${planted.mode600} from /etc/app/private.conf`],
    ["kubelet.service", `using token file content ${planted.tokenFile}`],
    ["kubelet.service", `kubeconfig user ${planted.kubeletToken}`],
    ["containerd.service", `pull with robot:${planted.registryAuthPassword} and ${planted.registryPassword}`],
    ["gardener-node-agent.service", `bootstrapping with ${planted.bootstrapToken}`],
    ["kubelet.service", `GET /api/v1/nodes Authorization: Bearer ${planted.bearer}`],
    ["kubelet.service", `projected token ${planted.jwt}`],
    ["greeter.service", `connecting with password=${planted.passwordShape}`],
    ["kubelet.service", `bad key:\n-----BEGIN PRIVATE KEY-----\n${planted.privateKey}\n-----END PRIVATE KEY-----`],
    ["gardener-node-agent.service", `client key ${clientKeyData}`],
    ["kubelet.service", "kubelet is ready"],
  ];
  await writeJournal(
    sb.root,
    lines.map(([unit, message], i) => ({ unit, message, atMs: minutesAgo(60 - i) })),
  );
}, 60_000);

afterAll(async () => {
  await sb?.stop();
});

describe("support on a sandbox node", () => {
  test("writes a 0600 tar.gz with status, diff, state, units, journal, Node and file list; no planted secret anywhere in it", async () => {
    const out = sb.besideRoot("bundle.tar.gz");
    const r = await run(["support", "--config-dir=/var/lib/gardener-node-agent", `--root=${sb.root}`, "-o", out], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${out}\n`);
    expect(r.stderr).toContain("support: journal of ");
    expect(r.stderr).toContain(`support: wrote ${out}`);
    expect((await stat(out)).mode & 0o777).toBe(0o600);

    const { top, files } = await unpack(out);
    await rm(out);
    expect(top).toMatch(/^gardener-node-agent-support-support-node-\d{8}T\d{6}Z$/);
    for (const m of [
      "MANIFEST.txt",
      "version.txt",
      "config.yaml",
      "status.json",
      "diff.json",
      "node/node.json",
      "state/last-applied-osc.yaml",
      "state/last-computed-osc-changes.yaml",
      "state/apply-status.json",
      "files.json",
      "units/systemctl-show.txt",
      "journal/units.log",
    ]) {
      expect(files.has(m)).toBe(true);
    }

    // Nothing secret, in any member, journal included; no file content either (kubelet's 0600 config).
    const all = [...files.entries()];
    for (const secret of [...Object.values(planted), clientKeyData, "cgroupDriver"]) {
      expect(all.filter(([, text]) => text.includes(secret)).map(([name]) => name)).toEqual([]);
    }

    const manifest = files.get("MANIFEST.txt") ?? "";
    for (const name of files.keys()) expect(manifest).toContain(`  ${name} `);
    // The node-agent authorizer lets the agent create events, not list them: said, not hidden.
    expect(manifest).toMatch(/node\/events\.json: events not readable with the node's credentials \(.*forbidden/);

    const journal = files.get("journal/units.log") ?? "";
    expect(journal).toContain("kubelet.service kubelet[4242]: kubelet started, version v1.33.0\n");
    expect(journal).toContain("Authorization: Bearer [redacted]");
    expect(journal.indexOf("kubelet started")).toBeLessThan(journal.indexOf("kubelet is ready"));

    const status = JSON.parse(files.get("status.json") ?? "") as { node: { name: string }; units: { name: string }[] };
    expect(status.node.name).toBe("support-node");
    expect((JSON.parse(files.get("diff.json") ?? "") as { changes: boolean }).changes).toBe(false);
    const node = JSON.parse(files.get("node/node.json") ?? "") as { annotations: Record<string, string>; conditions: { type: string }[] };
    expect(node.annotations["checksum/cloud-config-data"]).toMatch(/^[0-9a-f]{64}$/);
    expect(node.conditions.map((c) => c.type)).toContain("Ready");

    const listed = JSON.parse(files.get("files.json") ?? "") as {
      path: string;
      mode: string;
      size?: number;
      sha256?: string;
      secret?: string;
    }[];
    const byPath = new Map(listed.map((f) => [f.path, f]));
    expect(byPath.get("/etc/demo/greeting.txt")).toEqual({
      path: "/etc/demo/greeting.txt",
      source: "inline",
      mode: "0644",
      size: 6,
      sha256: new Bun.CryptoHasher("sha256").update("hello\n").digest("hex"),
    } as never);
    for (const secretPath of [
      "/etc/app/creds.conf",
      "/etc/app/private.conf",
      "/var/lib/kubelet/config/kubelet",
      "/var/lib/gardener-node-agent/registry-auth.json",
    ]) {
      expect(byPath.get(secretPath)?.secret).toBeDefined();
      expect(byPath.get(secretPath)?.sha256).toBeUndefined();
    }
    expect(files.get("units/systemctl-show.txt")).toContain(
      "Id=kubelet.service\nLoadState=loaded\nActiveState=active\nSubState=running\nUnitFileState=enabled",
    );
    expect(files.get("state/last-applied-osc.yaml")).toContain("[left out: ");
  }, 60_000);

  test("with the API server down and a size bound: exit 0, the newest journal entries kept, the manifest says what is missing", async () => {
    // A large old journal: 4000 entries of ~300 bytes, older than the planted ones above.
    const filler: JournalSeed[] = Array.from({ length: 4000 }, (_, i) => ({
      unit: "kubelet.service",
      message: `filler ${String(i).padStart(5, "0")} ${"x".repeat(280)}`,
      atMs: minutesAgo(600) + i * 1000,
    }));
    await writeJournal(sb.root, filler);
    await writeFile(
      join(sb.root, "var/lib/gardener-node-agent/unreachable.kubeconfig"),
      "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n",
    );
    const downEnv = { ...env, KUBECONFIG: "/var/lib/gardener-node-agent/unreachable.kubeconfig" };
    const cwd = await mkdtemp(join(tmpdir(), "support-cwd-"));
    const r = await run(
      ["support", "--config-dir=/var/lib/gardener-node-agent", `--root=${sb.root}`, "--max-size=256K", "--since=12h"],
      downEnv,
      cwd,
    );
    expect(r.code).toBe(0);
    const [name] = await readdir(cwd);
    expect(name).toMatch(/^gardener-node-agent-support-support-node-\d{8}T\d{6}Z\.tar\.gz$/);
    const bundle = join(cwd, name ?? "");
    expect((await stat(bundle)).size).toBeLessThanOrEqual(256 * 1024);
    const { files } = await unpack(bundle);
    await rm(cwd, { recursive: true, force: true });

    const manifest = files.get("MANIFEST.txt") ?? "";
    expect(files.has("diff.json")).toBe(false);
    expect(files.has("node/node.json")).toBe(false);
    expect(manifest).toMatch(/diff\.json: needs the API server: API server not reachable: /);
    expect(manifest).toMatch(/node\/node\.json: API server not reachable: /);
    expect(manifest).toMatch(
      /journal\/units\.log \(older entries\): size bound [\d.]+ KiB reached: entries at and before \S+ left out, the newest kept/,
    );
    // status works without the API server and says so.
    expect((JSON.parse(files.get("status.json") ?? "") as { nodeError: string }).nodeError).toStartWith("API server not reachable");
    const journal = files.get("journal/units.log") ?? "";
    expect(journal).toContain("kubelet is ready");
    expect(journal).toContain("filler 03999");
    expect(journal).not.toContain("filler 00000");
    for (const secret of Object.values(planted)) expect(journal).not.toContain(secret);
  }, 60_000);
});

describe("support on an image root (apply --offline)", () => {
  test("bundles the state files and the applied checksum without config, API server or systemd; bad flags exit 2", async () => {
    const root = await mkdtemp(join(tmpdir(), "support-image-"));
    const osc = `${root}-osc.yaml`;
    await Bun.write(osc, sampleOsc({ greeting: "baked" }));
    const noBus = { PATH: process.env["PATH"] ?? "", DBUS_SYSTEM_BUS_ADDRESS: "unix:path=/nonexistent" };
    try {
      const applied = await run(["apply", "--offline", `--root=${root}`, osc], noBus);
      expect(applied.code).toBe(0);
      const checksum = /Applied OSC ([0-9a-f]{64})/.exec(applied.stdout)?.[1] ?? "";
      const out = `${root}-bundle.tar.gz`;
      const r = await run(["support", `--root=${root}`, "-o", out], noBus);
      expect(r.code).toBe(0);
      const { files } = await unpack(out);
      await rm(out);
      const status = JSON.parse(files.get("status.json") ?? "") as { appliedOnDisk: { checksum: string } };
      expect(status.appliedOnDisk.checksum).toBe(checksum);
      expect(files.get("state/last-computed-osc-changes.yaml")).toContain(`operatingSystemConfigChecksum: ${checksum}`);
      const manifest = files.get("MANIFEST.txt") ?? "";
      expect(manifest).toContain("config.yaml: no agent configuration: ");
      expect(manifest).toContain("diff.json: needs the API server: no agent configuration");
      expect(manifest).toContain("units/systemctl-show.txt: systemd not reachable: ");
      expect(manifest).toContain("journal/units.log: no journal under the root");
      const listed = JSON.parse(files.get("files.json") ?? "") as { path: string; secret?: string }[];
      expect(listed.map((f) => f.path)).toEqual(["/etc/demo/greeting.txt", "/opt/bin/hello", "/var/lib/kubelet/config/kubelet"]);

      for (const bad of [["--since=soon"], ["--since=-1h"], ["--max-size=lots"], ["--max-size=1K"], ["--output="], ["extra"]]) {
        const b = await run(["support", `--root=${root}`, ...bad], noBus);
        expect(b.code).toBe(2);
        expect(b.stderr).toContain("see 'gardener-node-agent support --help'");
      }
      expect((await run(["support", "--help"], noBus)).stdout).toContain("support [-o FILE] [--since DURATION] [--max-size SIZE]");
    } finally {
      await rm(root, { recursive: true, force: true });
      await rm(osc, { force: true });
    }
  }, 30_000);
});
