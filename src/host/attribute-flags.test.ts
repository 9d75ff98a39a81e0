import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FS_APPEND_FL, FS_IMMUTABLE_FL, loadAttributeFlags } from "./attribute-flags.ts";
import { createHostFs } from "./host-fs.ts";

// The temp dir is tmpfs under `make test` and /tmp's ext4 otherwise (both take chattr flags, tmpfs since
// Linux 6.0), and the tests run as root, so chattr works there.
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

describe("loadAttributeFlags", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "gna-attr-"));
    writeFileSync(join(dir, "file"), "x");
    symlinkSync("file", join(dir, "link"));
    mkdirSync(join(dir, "sub"));
  });
  afterEach(() => {
    execFileSync("chattr", ["-i", "-a", join(dir, "file"), join(dir, "sub")]);
    rmSync(dir, { recursive: true, force: true });
  });

  test("statx answers the two flags as open + ioctl + close does, where the file system reports them (ext4)", async () => {
    const [viaStatx, viaIoctl] = await Promise.all([loadAttributeFlags(), loadAttributeFlags("libc.so.6", false)]);
    const both = (name: string) => {
      const a = viaStatx(join(dir, name));
      const b = viaIoctl(join(dir, name));
      return [a === undefined ? a : a & (FS_IMMUTABLE_FL | FS_APPEND_FL), b === undefined ? b : b & (FS_IMMUTABLE_FL | FS_APPEND_FL)];
    };
    expect(both("file")).toEqual([0, 0]);
    execFileSync("chattr", ["+i", join(dir, "file")]);
    execFileSync("chattr", ["+a", join(dir, "sub")]);
    expect(both("file")).toEqual([FS_IMMUTABLE_FL, FS_IMMUTABLE_FL]);
    expect(both("sub")).toEqual([FS_APPEND_FL, FS_APPEND_FL]);
    expect(both("link")).toEqual([undefined, undefined]);
    expect(both("missing")).toEqual([undefined, undefined]);
    expect(both("file/below")).toEqual([undefined, undefined]);
    // A path longer than the reader's first buffer (3 bytes a character), then a short one again.
    expect(viaStatx(`${dir}/${Array.from({ length: 15 }, () => "ä".repeat(100)).join("/")}`)).toBeUndefined();
    expect(both("file")).toEqual([FS_IMMUTABLE_FL, FS_IMMUTABLE_FL]);
  });
});
