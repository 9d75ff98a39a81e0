import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FS_APPEND_FL, FS_IMMUTABLE_FL } from "./attribute-flags.ts";
import { createHostFs } from "./host-fs.ts";

// /tmp is ext4 on the test hosts, and the tests run as root, so chattr works there.
describe("attributeFlags", () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "gna-attr-"));
    mkdirSync(join(root, "d"));
    writeFileSync(join(root, "d/file"), "x");
    symlinkSync("file", join(root, "d/link"));
  });
  afterEach(() => {
    execFileSync("chattr", ["-i", "-a", join(root, "d/file"), join(root, "d")]);
    rmSync(root, { recursive: true, force: true });
  });

  test("reads the immutable and append-only flags chattr sets on ext4, for files and directories", async () => {
    const host = createHostFs(root);
    const plain = await host.attributeFlags("/d/file");
    expect(plain).toBeNumber();
    expect((plain ?? 0) & (FS_IMMUTABLE_FL | FS_APPEND_FL)).toBe(0);
    execFileSync("chattr", ["+i", join(root, "d/file")]);
    expect((await host.attributeFlags("/d/file")) ?? 0).toBe((plain ?? 0) | FS_IMMUTABLE_FL);
    execFileSync("chattr", ["-i", "+a", join(root, "d/file")]);
    expect((await host.attributeFlags("/d/file")) ?? 0).toBe((plain ?? 0) | FS_APPEND_FL);
    execFileSync("chattr", ["+i", join(root, "d")]);
    expect(((await host.attributeFlags("/d")) ?? 0) & FS_IMMUTABLE_FL).toBe(FS_IMMUTABLE_FL);
  });

  test("answers undefined for a missing path, a symlink (not followed) and a file system without the ioctl", async () => {
    const host = createHostFs(root);
    expect(await host.attributeFlags("/d/missing")).toBeUndefined();
    expect(await host.attributeFlags("/d/file/below")).toBeUndefined();
    expect(await host.attributeFlags("/d/link")).toBeUndefined();
    // proc has no inode flags: ENOTTY.
    expect(await createHostFs("/").attributeFlags("/proc/version")).toBeUndefined();
  });

  test("attributeFlagsIn answers for the directory, links followed, and for each entry, not followed", async () => {
    symlinkSync("d", join(root, "via"));
    execFileSync("chattr", ["+a", join(root, "d/file")]);
    const host = createHostFs(root);
    const { dir, entries } = await host.attributeFlagsIn("/via", ["file", "link", "missing"]);
    expect(dir).toBe(await host.attributeFlags("/d"));
    expect(((entries[0] ?? 0) & FS_APPEND_FL) !== 0).toBe(true);
    expect(entries.slice(1)).toEqual([undefined, undefined]);
    await expect(host.attributeFlagsIn("/d", ["../d"])).rejects.toThrow("not an entry name");
  });
});
