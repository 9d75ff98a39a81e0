import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHostFs, HostFileKindError, HostPathError } from "../../src/host/index.ts";
import type { HostFs } from "../../src/host/index.ts";

let dir: string;
let root: string;
let host: HostFs;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "gna-hostfs-"));
  root = join(dir, "root");
  mkdirSync(root);
  host = createHostFs(root);
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("HostFs", () => {
  describe("writeFileAtomic", () => {
    test.each([
      [0o077, 0o644],
      [0o077, 0o777],
      [0o000, 0o600],
      [0o000, 0o640],
      [0o022, 0o4755],
    ])("should set the exact mode under umask %o (mode %o)", async (umask, mode) => {
      const previous = process.umask(umask);
      try {
        await host.writeFileAtomic("/etc/deep/dir/file", "x", mode);
        await host.writeFileAtomic("/etc/deep/dir/file", "y", mode); // replacing keeps the exact mode too
      } finally {
        process.umask(previous);
      }
      expect(statSync(join(root, "etc/deep/dir/file")).mode & 0o7777).toBe(mode);
      expect(statSync(join(root, "etc/deep")).mode & 0o7777).toBe(0o755);
      expect(statSync(join(root, "etc/deep/dir")).mode & 0o7777).toBe(0o755);
      expect(readFileSync(join(root, "etc/deep/dir/file"), "utf8")).toBe("y");
    });

    test("should never show a partial file to a concurrent reader", async () => {
      const size = 4 << 20;
      const a = new Uint8Array(size).fill(0x61);
      const b = new Uint8Array(size).fill(0x62);
      await host.writeFileAtomic("/var/big", a, 0o644);
      const real = join(root, "var/big");
      let writing = true;
      const seen = new Set<string>();
      const reader = (async () => {
        let reads = 0;
        while (writing || reads < 5) {
          const bytes = await Bun.file(real).bytes();
          reads++;
          const first = bytes[0];
          const uniform = bytes.length === size && bytes[size - 1] === first && bytes[size >> 1] === first;
          seen.add(uniform ? String.fromCharCode(first ?? 0) : `torn(${bytes.length})`);
        }
        return reads;
      })();
      for (let i = 0; i < 20; i++) await host.writeFileAtomic("/var/big", i % 2 === 0 ? b : a, 0o644);
      writing = false;
      expect(await reader).toBeGreaterThan(0);
      expect([...seen].filter((s) => s.startsWith("torn"))).toEqual([]);
      expect(readdirSync(join(root, "var"))).toEqual(["big"]); // no temp files left behind
    });

    test("should refuse to replace a directory and leave no temp file", async () => {
      mkdirSync(join(root, "etc/target"), { recursive: true });
      await expect(host.writeFileAtomic("/etc/target", "x", 0o644)).rejects.toBeInstanceOf(HostFileKindError);
      expect(readdirSync(join(root, "etc"))).toEqual(["target"]);
    });

    test("should replace a symlink at the target with a regular file, not write through it", async () => {
      writeFileSync(join(root, "elsewhere"), "old");
      symlinkSync("/elsewhere", join(root, "link"));
      await host.writeFileAtomic("/link", "new", 0o600);
      expect(lstatSync(join(root, "link")).isFile()).toBe(true);
      expect(readFileSync(join(root, "elsewhere"), "utf8")).toBe("old");
    });
  });

  describe("paths", () => {
    test.each(["etc/passwd", "", "./x", "/etc/../../outside", "/../x"])("should reject %p", async (path) => {
      expect(() => host.resolve(path)).toThrow(HostPathError);
      await expect(host.readFile(path)).rejects.toBeInstanceOf(HostPathError);
    });

    test("should reject a relative symlink that climbs out of the root", async () => {
      writeFileSync(join(dir, "secret"), "outside");
      mkdirSync(join(root, "etc"));
      symlinkSync("../../secret", join(root, "etc/escape"));
      symlinkSync("../..", join(root, "etc/updir"));
      await expect(host.readFile("/etc/escape")).rejects.toBeInstanceOf(HostPathError);
      await expect(host.writeFileAtomic("/etc/updir/secret", "pwned", 0o644)).rejects.toBeInstanceOf(HostPathError);
      expect(readFileSync(join(dir, "secret"), "utf8")).toBe("outside");
    });

    test("should take absolute symlink targets relative to the root", async () => {
      writeFileSync(join(dir, "secret"), "outside");
      mkdirSync(join(root, "data"));
      writeFileSync(join(root, "data/secret"), "inside");
      symlinkSync(join(dir), join(root, "abs")); // points at the real parent of the root…
      symlinkSync("/data", join(root, "datalink"));
      // …which inside the root means "<root><dir>", which does not exist.
      expect(await host.readText("/abs/secret")).toBeUndefined();
      expect(await host.readText("/datalink/secret")).toBe("inside");
      await host.writeFileAtomic("/datalink/new", "n", 0o644);
      expect(readFileSync(join(root, "data/new"), "utf8")).toBe("n");
      expect(host.resolve("/datalink/new")).toBe(join(root, "data/new"));
    });

    test("should reject a symlink loop", () => {
      symlinkSync("/b", join(root, "a"));
      symlinkSync("/a", join(root, "b"));
      expect(() => host.resolve("/a/x")).toThrow(HostPathError);
    });
  });

  describe("reads", () => {
    test("should return undefined for missing files and directories", async () => {
      expect(await host.readFile("/missing/file")).toBeUndefined();
      expect(await host.readText("/missing")).toBeUndefined();
      expect(await host.list("/missing")).toBeUndefined();
      expect(await host.stat("/missing")).toBeUndefined();
    });

    test("should list entries sorted and stat without following links", async () => {
      await host.writeFileAtomic("/d/b", "bb", 0o600);
      await host.writeFileAtomic("/d/a", "a", 0o640);
      await host.symlink("/d/a", "/d/c");
      expect(await host.list("/d")).toEqual(["a", "b", "c"]);
      expect(await host.stat("/d/a")).toEqual({ kind: "file", mode: 0o640, size: 1, links: 1 });
      expect((await host.stat("/d/c"))?.kind).toBe("symlink");
      expect((await host.stat("/d"))?.kind).toBe("dir");
      expect(await host.readText("/d/c")).toBe("a");
    });

    test("should list entries with their kinds without following links", async () => {
      await host.writeFileAtomic("/d/file", "x", 0o600);
      await host.ensureDir("/d/sub");
      await host.symlink("/d/file", "/d/link");
      execFileSync("mkfifo", [join(root, "d/fifo")]);
      expect(await host.listKinds("/missing")).toBeUndefined();
      expect(Object.fromEntries((await host.listKinds("/d")) ?? [])).toEqual({ file: "file", sub: "dir", link: "symlink", fifo: "other" });
      await expect(host.listKinds("/d/file")).rejects.toThrow(new HostFileKindError("/d/file", "file", "list"));
    });

    test("should hash a file in pieces to the digest of its bytes, also beyond one piece", async () => {
      const big = new Uint8Array(3 * 1024 * 1024 + 7).map((_, i) => i % 251);
      await host.writeFileAtomic("/d/big", big, 0o600);
      await host.writeFileAtomic("/d/empty", "", 0o600);
      const sha = (b: Uint8Array | string) => new Bun.CryptoHasher("sha256").update(b).digest("hex");
      expect(await host.sha256("/d/big")).toBe(sha(big));
      expect(await host.sha256("/d/empty")).toBe(sha(""));
      expect(await host.sha256("/d/missing")).toBeUndefined();
      await expect(host.sha256("/d")).rejects.toThrow(new HostFileKindError("/d", "dir", "read"));
    });

    test("should refuse to read a FIFO (opening it would wait for a writer for ever) and a directory", async () => {
      execFileSync("mkfifo", [join(root, "fifo")]);
      symlinkSync("fifo", join(root, "link-to-fifo"));
      mkdirSync(join(root, "d"));
      await expect(host.readFile("/fifo")).rejects.toThrow(new HostFileKindError("/fifo", "other", "read"));
      await expect(host.readText("/link-to-fifo")).rejects.toThrow(HostFileKindError);
      await expect(host.readFile("/d")).rejects.toThrow(new HostFileKindError("/d", "dir", "read"));
      await expect(host.sha256("/fifo")).rejects.toThrow(new HostFileKindError("/fifo", "other", "read"));
    });
  });

  describe("remove", () => {
    test("should tolerate missing files", async () => {
      expect(await host.remove("/nope")).toBe(false);
      expect(await host.remove("/nope/deeper")).toBe(false);
      await host.removeAll("/nope");
    });

    test("should remove a symlink itself, not its target", async () => {
      await host.writeFileAtomic("/t", "t", 0o644);
      await host.symlink("/t", "/l");
      expect(await host.remove("/l")).toBe(true);
      expect(readFileSync(join(root, "t"), "utf8")).toBe("t");
    });

    test("should refuse to remove a directory but removeAll should remove the tree", async () => {
      await host.writeFileAtomic("/tree/x/y", "y", 0o644);
      await expect(host.remove("/tree")).rejects.toBeInstanceOf(HostFileKindError);
      await host.removeAll("/tree");
      expect(await host.stat("/tree")).toBeUndefined();
    });
  });

  describe("ensureDir and chmod", () => {
    test("should create directories with the exact mode and leave existing ones alone", async () => {
      const previous = process.umask(0o077);
      try {
        mkdirSync(join(root, "var"), { mode: 0o700 });
        await host.ensureDir("/var/lib/gna/tmp", 0o750);
      } finally {
        process.umask(previous);
      }
      expect(statSync(join(root, "var")).mode & 0o7777).toBe(0o700);
      expect(statSync(join(root, "var/lib/gna/tmp")).mode & 0o7777).toBe(0o750);
      await host.chmod("/var/lib/gna/tmp", 0o700);
      expect(statSync(join(root, "var/lib/gna/tmp")).mode & 0o7777).toBe(0o700);
    });

    test("should fail when a path component is a file", async () => {
      await host.writeFileAtomic("/f", "", 0o644);
      await expect(host.ensureDir("/f/sub")).rejects.toBeInstanceOf(HostFileKindError);
    });
  });

  describe("removeStaleTemps", () => {
    test("should remove only the temp files atomic writes leave behind, never a look-alike", async () => {
      await host.writeFileAtomic("/etc/app/config", "x", 0o644);
      const etc = join(root, "etc/app");
      const stale = [".config.tmp-0123456789ab", ".other name.tmp-a1b2c3d4e5f6"];
      const lookAlikes = [
        ".config.tmp", // upstream's cross-device helper name
        ".config.tmp-0123456789AB", // not our hex
        ".config.tmp-0123456789abc",
        ".config.tmp-0123456789ab.bak",
        "config.tmp-0123456789ab",
        "..tmp-0123456789ab",
      ];
      for (const n of [...stale, ...lookAlikes]) writeFileSync(join(etc, n), "left over");
      symlinkSync("/etc/app/config", join(etc, ".link.tmp-ffffffffffff"));
      mkdirSync(join(etc, ".dir.tmp-0123456789ab"));

      const removed = await host.removeStaleTemps("/etc/app");

      expect(removed.sort()).toEqual([
        "/etc/app/.config.tmp-0123456789ab",
        "/etc/app/.link.tmp-ffffffffffff",
        "/etc/app/.other name.tmp-a1b2c3d4e5f6",
      ]);
      expect(readdirSync(etc).sort()).toEqual([...lookAlikes, ".dir.tmp-0123456789ab", "config"].sort());
      expect(readFileSync(join(etc, "config"), "utf8")).toBe("x");
    });

    test("should take the entry names listed moments before instead of reading the directory again", async () => {
      await host.writeFileAtomic("/etc/app/config", "x", 0o644);
      await host.writeFileAtomic("/etc/other/config", "x", 0o644);
      const etc = join(root, "etc/app");
      writeFileSync(join(etc, ".config.tmp-0123456789ab"), "left over");
      writeFileSync(join(etc, ".later.tmp-0123456789ab"), "written after the listing");
      writeFileSync(join(root, "etc/other/.config.tmp-0123456789ab"), "elsewhere");
      const listed = ["config", ".config.tmp-0123456789ab", "../other/.config.tmp-0123456789ab", ".gone.tmp-0123456789ab"];
      expect(await host.removeStaleTemps("/etc/app", listed)).toEqual(["/etc/app/.config.tmp-0123456789ab"]);
      expect(readdirSync(etc).sort()).toEqual([".later.tmp-0123456789ab", "config"]);
      expect(readdirSync(join(root, "etc/other")).sort()).toEqual([".config.tmp-0123456789ab", "config"]);
    });

    test("should find nothing in a missing directory or a file", async () => {
      await host.writeFileAtomic("/etc/file", "x", 0o644);
      expect(await host.removeStaleTemps("/etc/missing")).toEqual([]);
      expect(await host.removeStaleTemps("/etc/file")).toEqual([]);
    });
  });

  describe("paths while an apply holds the memo", () => {
    /** What resolve answers for `path`: the real path under the root, or the error's message. */
    const answer = (path: string): string => {
      try {
        return host.resolve(path);
      } catch (err) {
        return err instanceof HostPathError ? err.message : String(err);
      }
    };

    test("should resolve every path as without it, also when asked again", () => {
      writeFileSync(join(dir, "secret"), "outside");
      mkdirSync(join(root, "etc/real"), { recursive: true });
      mkdirSync(join(root, "data"));
      writeFileSync(join(root, "etc/file"), "f");
      symlinkSync("real", join(root, "etc/rel"));
      symlinkSync("/data", join(root, "etc/abs"));
      symlinkSync("../../secret", join(root, "etc/escape"));
      symlinkSync("/b", join(root, "a"));
      symlinkSync("/a", join(root, "b"));
      const paths = ["/etc", "/etc/real/x", "/etc/rel", "/etc/rel/x", "/etc/abs/y/z", "/etc/escape", "/etc/escape/x", "/etc/file/x"];
      paths.push("/a/x", "/missing/dir/x", "/", "/etc/real");
      const without = paths.map(answer);
      const release = host.holdPathMemo();
      try {
        expect(paths.map(answer)).toEqual(without);
        expect(paths.map(answer)).toEqual(without);
      } finally {
        release();
      }
    });

    test("should forget a directory reached through a link once HostFs replaces that link", async () => {
      mkdirSync(join(root, "one"));
      mkdirSync(join(root, "two"));
      await host.symlink("/one", "/etc/l");
      const release = host.holdPathMemo();
      try {
        await host.writeFileAtomic("/etc/l/x", "1", 0o644);
        await host.symlink("/two", "/etc/l");
        await host.writeFileAtomic("/etc/l/y", "2", 0o644);
        expect([readdirSync(join(root, "one")), readdirSync(join(root, "two"))]).toEqual([["x"], ["y"]]);
        // A regular file written over the link: nothing below it any more.
        await host.writeFileAtomic("/etc/l", "file", 0o644);
        await expect(host.writeFileAtomic("/etc/l/z", "3", 0o644)).rejects.toThrow();
        expect(readdirSync(join(root, "two"))).toEqual(["y"]);
      } finally {
        release();
      }
    });

    test("should forget after removing a link or a tree, so a link put there since cannot lead out of the root", async () => {
      writeFileSync(join(dir, "secret"), "outside");
      mkdirSync(join(root, "one"));
      await host.symlink("/one", "/etc/l");
      const release = host.holdPathMemo();
      try {
        await host.writeFileAtomic("/etc/l/x", "1", 0o644);
        await host.remove("/etc/l");
        await host.ensureDir("/etc/l");
        await host.writeFileAtomic("/etc/l/y", "2", 0o644);
        expect([readdirSync(join(root, "one")), readdirSync(join(root, "etc/l"))]).toEqual([["x"], ["y"]]);

        await host.writeFileAtomic("/etc/d/x", "1", 0o644);
        await host.removeAll("/etc/d");
        symlinkSync("../..", join(root, "etc/d")); // by another process, after the tree went
        await expect(host.writeFileAtomic("/etc/d/secret", "pwned", 0o644)).rejects.toBeInstanceOf(HostPathError);
      } finally {
        release();
      }
      expect(readFileSync(join(dir, "secret"), "utf8")).toBe("outside");
    });

    test("should walk every path again once the last holder lets go", async () => {
      writeFileSync(join(dir, "secret"), "outside");
      mkdirSync(join(root, "etc/d"), { recursive: true });
      const first = host.holdPathMemo();
      const second = host.holdPathMemo();
      await host.writeFileAtomic("/etc/d/x", "1", 0o644);
      first();
      first(); // a second call of the same release counts once
      rmSync(join(root, "etc/d"), { recursive: true });
      symlinkSync("../..", join(root, "etc/d"));
      // Still held by the second holder: remembered (another process's change, outside the threat model).
      expect(host.resolve("/etc/d/secret")).toBe(join(root, "etc/d/secret"));
      second();
      await expect(host.writeFileAtomic("/etc/d/secret", "pwned", 0o644)).rejects.toBeInstanceOf(HostPathError);
      const next = host.holdPathMemo(); // the next apply starts with nothing remembered
      try {
        await expect(host.writeFileAtomic("/etc/d/secret", "pwned", 0o644)).rejects.toBeInstanceOf(HostPathError);
      } finally {
        next();
      }
      expect(readFileSync(join(dir, "secret"), "utf8")).toBe("outside");
    });
  });

  describe("symlink", () => {
    test("should replace an existing symlink atomically", async () => {
      await host.symlink("/one", "/etc/l");
      await host.symlink("/two", "/etc/l");
      expect(await host.list("/etc")).toEqual(["l"]);
      expect(host.resolve("/etc/l")).toBe(join(root, "two"));
    });
  });
});
