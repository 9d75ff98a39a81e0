// Issue 27 "Input, the rest", the OSC cases through the compiled agent (`make build`): an osc.yaml nested
// 20,000 levels deep, a YAML alias bomb, a unit file that is a symlink out of the root, and an immutable
// target (chattr +i). Each is one Warning event naming the problem, before anything is written.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, symlink } from "node:fs/promises";
import { join } from "node:path";
import { waitForEvent } from "../harness/events.ts";
import { type AgentProcess, type Sandbox, startSandbox } from "../harness/sandbox.ts";

let sb: Sandbox;
let agent: AgentProcess;
beforeAll(async () => {
  sb = await startSandbox({ nodeName: "osc-bad-input" });
  agent = sb.spawnAgent();
});
afterAll(async () => {
  // An immutable file left behind would keep the sandbox from being deleted.
  execFileSync("chattr", ["-i", join(sb.root, "etc/locked.conf")], { stdio: "ignore" });
  await agent.stop();
  await sb.stop();
});

const header = "apiVersion: extensions.gardener.cloud/v1alpha1\nkind: OperatingSystemConfig\n";
const applyFailed = (part: string) => (e: { type: string; reason: string; message: string }) =>
  e.type === "Warning" && e.reason === "OSCApplyFailed" && e.message.includes(part);

describe("OSC with bad input (whole binary)", () => {
  test("should refuse an osc.yaml nested 20,000 levels deep naming the problem and its line", async () => {
    sb.setOsc(`${header}spec:\n  files: ${"[".repeat(20_000)}${"]".repeat(20_000)}\n`);
    const e = await waitForEvent(sb.sim, applyFailed("nesting too deep to parse"), 30_000, "for the deep osc.yaml");
    expect(e.message).toMatch(/invalid YAML: nesting too deep to parse \(at most 200 levels are accepted\) at line 4, column \d+$/);
    expect(agent.output()).not.toContain("Maximum call stack");
  });

  test("should refuse a 7-level alias bomb", async () => {
    let bomb = "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n";
    for (let i = 1; i <= 7; i++)
      bomb += `l${i}: &l${i} [${Array(10)
        .fill(`*l${i - 1}`)
        .join(", ")}]\n`;
    sb.setOsc(`${header}${bomb}spec: {}\n`);
    await waitForEvent(sb.sim, applyFailed("an alias is unresolvable or expands too often"), 30_000, "for the alias bomb");
  });

  test("should refuse a unit file that is a symlink out of the root before writing any file", async () => {
    await mkdir(join(sb.root, "etc/systemd/system"), { recursive: true });
    await symlink("../../../../../../../../../outside.service", join(sb.root, "etc/systemd/system/escape.service"));
    sb.setOsc(
      `${header}spec:\n  files:\n  - path: /etc/first.conf\n    content: {inline: {data: one}}\n  - path: /etc/second.conf\n    content: {inline: {data: two}}\n  units:\n  - name: escape.service\n    content: "[Service]\\nExecStart=/bin/true\\n"\n`,
    );
    const e = await waitForEvent(sb.sim, applyFailed('unit "escape.service"'), 30_000, "for the escaping unit file");
    expect(e.message).toContain('cannot write "/etc/systemd/system/escape.service": invalid host path');
    expect(e.message).toContain("a symlink points outside the root");
    expect(existsSync(join(sb.root, "etc/first.conf"))).toBe(false);
    expect(existsSync(join(sb.root, "etc/second.conf"))).toBe(false);
  });

  // The temp dir (tmpfs under `make test`, /tmp's ext4 otherwise; tmpfs takes chattr flags since Linux 6.0)
  // and root: chattr works on the sandbox.
  test("should refuse an immutable target before writing any of the files, and converge once it is mutable", async () => {
    const oscWith = (data: string) =>
      `${header}spec:\n  files:\n${["a", "b", "c", "d", "e", "locked"]
        .map((n) => `  - path: /etc/${n}.conf\n    content: {inline: {data: ${data}-${n}}}\n`)
        .join("")}`;
    const lastApplied = join(sb.root, "var/lib/gardener-node-agent/last-applied-osc.yaml");
    await sb.waitForApplied(sb.setOsc(oscWith("old")));
    const appliedBefore = await readFile(lastApplied, "utf8");
    execFileSync("chattr", ["+i", join(sb.root, "etc/locked.conf")]);
    const next = sb.setOsc(oscWith("new"));
    const e = await waitForEvent(sb.sim, applyFailed("immutable"), 30_000, "for the immutable target");
    expect(e.message).toEndWith('file "/etc/locked.conf": cannot write "/etc/locked.conf": "/etc/locked.conf" is immutable (chattr +i)');
    for (const n of ["a", "b", "c", "d", "e", "locked"]) expect(await readFile(join(sb.root, `etc/${n}.conf`), "utf8")).toBe(`old-${n}`);
    expect(await readFile(lastApplied, "utf8")).toBe(appliedBefore);
    execFileSync("chattr", ["-i", join(sb.root, "etc/locked.conf")]);
    await sb.waitForApplied(next, 60_000);
    for (const n of ["a", "b", "c", "d", "e", "locked"]) expect(await readFile(join(sb.root, `etc/${n}.conf`), "utf8")).toBe(`new-${n}`);
  }, 120_000);
});
