// Image baking: `apply --offline` lays an OSC into a root exactly as a live apply would, enables units
// through [Install] symlinks, and records the state so the first boot restarts nothing.
import { afterEach, describe, expect, test } from "bun:test";
import { lstatSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { sampleOsc } from "../demo/sample-osc.ts";
import { agentBinary, startSandbox, type Sandbox } from "../harness/sandbox.ts";

const sandboxes: Sandbox[] = [];
afterEach(async () => {
  await Promise.all(sandboxes.splice(0).map((s) => s.stop()));
});

async function offlineApply(sb: Sandbox, oscYaml: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const oscFile = sb.besideRoot("osc.yaml");
  await Bun.write(oscFile, oscYaml);
  const p = Bun.spawnSync([agentBinary, "apply", "--offline", `--root=${sb.root}`, oscFile], { env: { PATH: process.env["PATH"] ?? "" } });
  return { code: p.exitCode, stdout: p.stdout.toString(), stderr: p.stderr.toString() };
}

const osc = sampleOsc({ greeting: "baked" });

describe("apply --offline", () => {
  test("writes the same files and state as a live apply of the same OSC", async () => {
    const live = await startSandbox({ nodeName: "live-node" });
    const baked = await startSandbox({ nodeName: "baked-node", createNode: false });
    sandboxes.push(live, baked);
    const checksum = live.setOsc(osc);
    const agent = live.spawnAgent();
    await live.waitForApplied(checksum);
    await agent.stop();

    const r = await offlineApply(baked, osc);
    expect(r.stderr).not.toContain("Error");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Applied OSC ${checksum}`);

    const regular = (files: { path: string; mode: string }[]) => files.filter((f) => !f.path.includes(".wants/"));
    expect(regular(await baked.listFiles())).toEqual(regular(await live.listFiles()));
    for (const f of regular(await live.listFiles())) expect(await baked.readHostFile(f.path)).toBe(await live.readHostFile(f.path));
    const state = "/var/lib/gardener-node-agent/last-applied-osc.yaml";
    expect(await baked.readHostFile(state)).toBe(await live.readHostFile(state));
  });

  test("enables units through their [Install] section like systemctl --root", async () => {
    const sb = await startSandbox({ nodeName: "baked-node", createNode: false });
    sandboxes.push(sb);
    expect((await offlineApply(sb, osc)).code).toBe(0);
    for (const unit of ["kubelet.service", "greeter.service"]) {
      const link = join(sb.root, "etc/systemd/system/multi-user.target.wants", unit);
      expect(lstatSync(link).isSymbolicLink()).toBe(true);
      expect(readlinkSync(link)).toBe(`/etc/systemd/system/${unit}`);
    }
  });

  test("makes the first boot restart nothing: the agent finds the baked state current", async () => {
    const sb = await startSandbox({ nodeName: "first-boot" });
    sandboxes.push(sb);
    expect((await offlineApply(sb, osc)).code).toBe(0);
    const checksum = sb.setOsc(osc);
    const agent = sb.spawnAgent();
    await sb.waitForApplied(checksum);
    await agent.stop();
    const acted = sb.systemd.actions.filter((a) => ["Enable", "Disable", "Start", "Stop", "Restart"].includes(a.action));
    expect(acted).toEqual([]);
  });

  test("rejects a missing --offline with a usage error and exit 2", async () => {
    const p = Bun.spawnSync([agentBinary, "apply", "--root=/tmp", "--osc=/dev/null"]);
    expect(p.exitCode).toBe(2);
    expect(p.stderr.toString()).toContain("apply needs --offline");
  });

  test("rejects an invalid OSC naming the field, writing nothing", async () => {
    const sb = await startSandbox({ nodeName: "bad", createNode: false });
    sandboxes.push(sb);
    const bad = osc.replace("encoding: b64", "encoding: gzip");
    const r = await offlineApply(sb, bad);
    expect(r.code).toBe(1);
    // The file and the field are named; the value found is not echoed.
    expect(r.stdout + r.stderr).toContain('file "/etc/demo/greeting.txt": invalid file codec id: expected "" or "b64"');
    expect(r.stdout + r.stderr).not.toContain("gzip");
    expect(await sb.listFiles()).toEqual([]);
  });
});
