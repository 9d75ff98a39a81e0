// `diff` and `status` of the compiled binary: on an image root (--offline --root) and on a live
// sandbox node (the Secret read with the node's own credentials), exit codes, JSON, and that `diff`
// writes nothing (a hash of the root before and after).
import { afterEach, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { lstat, readFile, readdir, readlink, rm } from "node:fs/promises";
import { join } from "node:path";
import { sampleOsc } from "../demo/sample-osc.ts";
import { agentBinary, agentEnv, startSandbox, type Sandbox } from "../harness/sandbox.ts";

const sandboxes: Sandbox[] = [];
afterEach(async () => {
  await Promise.all(sandboxes.splice(0).map((s) => s.stop()));
});

/** sha256 over every path, mode and content (or link target) under `root`. */
async function hashRoot(root: string): Promise<string> {
  const h = createHash("sha256");
  const walk = async (dir: string): Promise<void> => {
    for (const name of (await readdir(join(root, dir))).sort()) {
      const rel = `${dir}/${name}`;
      const st = await lstat(join(root, rel));
      h.update(`${rel} ${st.mode}\n`);
      if (st.isDirectory()) await walk(rel);
      else if (st.isSymbolicLink()) h.update(await readlink(join(root, rel)));
      else h.update(await readFile(join(root, rel)));
    }
  };
  await walk("");
  return h.digest("hex");
}

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Spawned asynchronously: the simulator and the systemd double answer from this very process. */
const run = async (args: string[], env: Record<string, string> = { PATH: process.env["PATH"] ?? "" }): Promise<Run> => {
  const p = Bun.spawn([agentBinary, ...args], { env, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr };
};

async function oscFile(sb: Sandbox, name: string, yaml: string): Promise<string> {
  const path = sb.besideRoot(`${name}.yaml`);
  await Bun.write(path, yaml);
  return path;
}

describe("diff --offline --root (image root)", () => {
  test("previews the first apply, writes nothing, then reports nothing to do after apply --offline, and a one-file change after that", async () => {
    const sb = await startSandbox({ nodeName: "image", createNode: false });
    sandboxes.push(sb);
    const v1 = await oscFile(sb, "v1", sampleOsc({ greeting: "baked" }));
    const before = await hashRoot(sb.root);
    const first = await run(["diff", "--offline", `--root=${sb.root}`, v1]);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(1);
    expect(await hashRoot(sb.root)).toBe(before);
    // Mode 0600: size only, never the content.
    expect(first.stdout).toContain("create /var/lib/kubelet/config/kubelet (mode 0600, 91 bytes): content differs, 91 bytes");
    expect(first.stdout).not.toContain("KubeletConfiguration");
    expect(first.stdout).toContain(
      "create /etc/demo/greeting.txt (mode 0644, 6 bytes)\n    --- /dev/null\n    +++ /etc/demo/greeting.txt\n    @@ -0,0 +1 @@\n    +baked\n",
    );
    expect(first.stdout).toContain("kubelet.service: write, enable, restart\n    drop-in 10-extra-args.conf: create");
    expect(first.stdout).toContain("containerd: restarts");

    const applied1 = await run(["apply", "--offline", `--root=${sb.root}`, v1]);
    expect(applied1.code).toBe(0);
    const appliedChecksum = /Applied OSC ([0-9a-f]{64}) /.exec(applied1.stdout)?.[1] ?? "";
    expect(appliedChecksum).toBe(
      createHash("sha256")
        .update(await readFile(v1))
        .digest("hex"),
    );
    // status names what apply --offline applied, and when, from the state files alone.
    const statusText = await run(["status", `--root=${sb.root}`], {
      PATH: process.env["PATH"] ?? "",
      DBUS_SYSTEM_BUS_ADDRESS: "unix:path=/nonexistent",
    });
    expect(statusText.code).toBe(0);
    expect(statusText.stdout).toMatch(
      new RegExp(
        `Applied       ${appliedChecksum.slice(0, 12)}, applied, at \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ \\(from the state files`,
      ),
    );
    const same = await run(["diff", "--offline", `--root=${sb.root}`, v1]);
    expect(same.code).toBe(0);
    expect(same.stdout).toContain("nothing to do");

    // status on the image root: no config, no systemd, no API server — still the local state; a damaged
    // status file is named, not fatal.
    await Bun.write(join(sb.root, "var/lib/gardener-node-agent/apply-status.json"), "{broken");
    const st = await run(["status", `--root=${sb.root}`, "-o", "json"], {
      PATH: process.env["PATH"] ?? "",
      DBUS_SYSTEM_BUS_ADDRESS: "unix:path=/nonexistent",
    });
    expect(st.code).toBe(0);
    const report = JSON.parse(st.stdout) as {
      lastAppliedFile: boolean;
      appliedOnDisk: { checksum: string; at: string };
      problems: string[];
      units: { name: string; active: string }[];
    };
    expect(report.lastAppliedFile).toBe(true);
    expect(report.appliedOnDisk.checksum).toBe(appliedChecksum);
    expect(report.problems).toHaveLength(1);
    expect(report.problems[0]).toStartWith("/var/lib/gardener-node-agent/apply-status.json is not valid JSON");
    expect(report.units.map((u) => [u.name, u.active])).toEqual([
      ["greeter.service", "?"],
      ["kubelet.service", "?"],
    ]);
    await rm(join(sb.root, "var/lib/gardener-node-agent/apply-status.json"));

    const v2 = await oscFile(sb, "v2", sampleOsc({ greeting: "rebaked" }));
    const applied = await hashRoot(sb.root);
    const changed = await run(["diff", "--offline", `--root=${sb.root}`, "-o", "json", v2]);
    expect(changed.code).toBe(1);
    expect(await hashRoot(sb.root)).toBe(applied);
    const preview = JSON.parse(changed.stdout) as {
      changes: boolean;
      files: { path: string; action: string; diff?: string }[];
      units: { name: string; actions: string[] }[];
    };
    expect(preview.changes).toBe(true);
    expect(preview.files).toEqual([
      {
        path: "/etc/demo/greeting.txt",
        action: "change",
        mode: { from: "0644", to: "0644" },
        size: { from: 6, to: 8 },
        diff: "--- /etc/demo/greeting.txt\n+++ /etc/demo/greeting.txt\n@@ -1 +1 @@\n-baked\n+rebaked\n",
      } as never,
    ]);
    expect(preview.units).toEqual([{ name: "greeter.service", actions: ["enable", "restart"], dropIns: [] } as never]);
  }, 60_000);

  test("exits 2 on errors: a missing file, an invalid OSC naming the field, a bad output format", async () => {
    const sb = await startSandbox({ nodeName: "image-bad", createNode: false });
    sandboxes.push(sb);
    const missing = await run(["diff", "--offline", `--root=${sb.root}`, "/nonexistent/osc.yaml"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("OSC file /nonexistent/osc.yaml does not exist");
    const bad = await oscFile(sb, "bad", sampleOsc({ greeting: "x" }).replace("encoding: b64", "encoding: gzip"));
    const invalid = await run(["diff", "--offline", `--root=${sb.root}`, bad]);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('file "/etc/demo/greeting.txt": invalid file codec id: expected "" or "b64"');
    expect(invalid.stderr).not.toContain("gzip");
    expect(invalid.stderr).not.toContain("    at ");
    expect((await run(["diff", "--offline", `--root=${sb.root}`, "-o", "yaml", bad])).code).toBe(2);
    expect(await sb.listFiles()).toEqual([]);
  }, 30_000);

  test("lists secretRef files without resolving them offline", async () => {
    const sb = await startSandbox({ nodeName: "image-ref", createNode: false });
    sandboxes.push(sb);
    const yaml = `${sampleOsc({ greeting: "x" })}  - path: /etc/secret.conf\n    permissions: 0644\n    content:\n      secretRef: {name: creds, dataKey: token}\n`;
    const r = await run(["diff", "--offline", `--root=${sb.root}`, await oscFile(sb, "ref", yaml)]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("create /etc/secret.conf (mode 0644): content from secret creds (not resolved offline)");
  }, 30_000);
});

describe("diff and status on a node", () => {
  test("show a held change with its gate, the applied version, the live units and the Node's view; diff writes nothing", async () => {
    const sb = await startSandbox({ nodeName: "ops-node" });
    sandboxes.push(sb);
    const env = agentEnv(sb.systemd.address, sb.nodeName);
    const flags = ["--config-dir=/var/lib/gardener-node-agent", `--root=${sb.root}`];
    const agent = sb.spawnAgent();
    const v1 = sb.setOsc(sampleOsc({ greeting: "before" }));
    await sb.waitForApplied(v1);
    sb.sim.store.patch("nodes", "", sb.nodeName, "merge", {
      metadata: { annotations: { "node-agent.gardener.cloud/hold": "change freeze" } },
    });
    const v2 = sb.setOsc(sampleOsc({ greeting: "after" }));
    await sb.sim.waitFor("nodes", "", sb.nodeName, (n) => JSON.stringify(n?.["status"] ?? {}).includes('"reason":"Held"'), 30_000);
    await agent.stop();

    const before = await hashRoot(sb.root);
    const diff = await run(["diff", ...flags], env);
    expect(diff.stderr).toBe("");
    expect(diff.code).toBe(1);
    expect(await hashRoot(sb.root)).toBe(before);
    expect(diff.stdout).toContain(`secret kube-system/${sb.secretName}: operating system config ${v2.slice(0, 12)}`);
    expect(diff.stdout).toContain("    -before\n    +after\n");
    expect(diff.stdout).toContain("greeter.service: enable, restart");
    expect(diff.stdout).toContain("Gates:\n  hold        holds the apply (Held): Held by node-agent.gardener.cloud/hold (change freeze)");

    const status = await run(["status", ...flags], env);
    expect(status.stderr).toBe("");
    expect(status.code).toBe(0);
    expect(await hashRoot(sb.root)).toBe(before);
    expect(status.stdout).toContain(`Applied       ${v1.slice(0, 12)}, applied, at `);
    expect(status.stdout).toMatch(/Pending       Held since \S+: Held by node-agent.gardener.cloud\/hold \(change freeze\)/);
    expect(status.stdout).toMatch(/kubelet\.service\s+enabled\s+active\s+running/);
    expect(status.stdout).toContain(`Node ops-node (API server)`);
    expect(status.stdout).toMatch(/Condition     False\/Held since /);
    expect(status.stdout).toContain("Hold          change freeze");
    expect(status.stdout).toContain(`Checksum      ${v1.slice(0, 12)}, the Secret has ${v2.slice(0, 12)}`);

    const json = JSON.parse((await run(["status", "-o", "json", ...flags], env)).stdout) as {
      node: { hold: string; checksum: string };
      pending: { gate: { reason: string } };
    };
    expect(json.node.hold).toBe("change freeze");
    expect(json.node.checksum).toBe(v1);
    expect(json.pending.gate.reason).toBe("Held");

    // Back to the applied version: nothing to do.
    sb.setOsc(sampleOsc({ greeting: "before" }));
    const none = await run(["diff", ...flags], env);
    expect(none.code).toBe(0);
    expect(none.stdout).toContain("up to date");
  }, 60_000);

  test("status works without the API server (state files and systemd only)", async () => {
    const sb = await startSandbox({ nodeName: "offline-node" });
    sandboxes.push(sb);
    const agent = sb.spawnAgent();
    const v1 = sb.setOsc(sampleOsc({ greeting: "x" }));
    await sb.waitForApplied(v1);
    await sb.sim.waitFor("nodes", "", sb.nodeName, (n) => JSON.stringify(n?.["status"] ?? {}).includes('"reason":"Applied"'), 30_000);
    await agent.stop();
    await Bun.write(
      join(sb.root, "var/lib/gardener-node-agent/unreachable.kubeconfig"),
      "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n",
    );
    const env = agentEnv(sb.systemd.address, sb.nodeName, { KUBECONFIG: "/var/lib/gardener-node-agent/unreachable.kubeconfig" });
    const r = await run(["status", "--config-dir=/var/lib/gardener-node-agent", `--root=${sb.root}`], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Applied       ${v1.slice(0, 12)}, applied`);
    expect(r.stdout).toMatch(/greeter\.service\s+enabled/);
    expect(r.stdout).toContain("Node: not shown (API server not reachable:");
    // diff needs the Secret: without the API server it is an error (2), not "no changes".
    expect((await run(["diff", "--config-dir=/var/lib/gardener-node-agent", `--root=${sb.root}`], env)).code).toBe(2);
  }, 60_000);
});
