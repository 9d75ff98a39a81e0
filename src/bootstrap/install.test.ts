import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { lstat, mkdtemp, readFile, readlink, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHostFs } from "../host/index.ts";
import { installAgent } from "./install.ts";

describe("installAgent", () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "gna-install-"));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  test("places binary, unit and wants-link like systemctl --root enable, and is repeatable", async () => {
    const host = createHostFs(root);
    await installAgent(host, new TextEncoder().encode("#!/bin/true\n"));
    await installAgent(host, new TextEncoder().encode("#!/bin/true\n"));
    expect((await stat(join(root, "opt/bin/gardener-node-agent"))).mode & 0o777).toBe(0o755);
    const unit = join(root, "etc/systemd/system/gardener-node-agent.service");
    expect((await stat(unit)).mode & 0o777).toBe(0o644);
    expect(await readFile(unit, "utf8")).toEndWith("[Install]\nWantedBy=multi-user.target");
    const link = join(root, "etc/systemd/system/multi-user.target.wants/gardener-node-agent.service");
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
    expect(await readlink(link)).toBe("/etc/systemd/system/gardener-node-agent.service");
  });

  test("systemctl --root reports the installed unit as enabled", async () => {
    await installAgent(createHostFs(root), new Uint8Array([0x7f, 0x45, 0x4c, 0x46]));
    const res = Bun.spawnSync(["systemctl", "--root", root, "is-enabled", "gardener-node-agent.service"]);
    expect(res.stdout.toString().trim()).toBe("enabled");
  });
});
