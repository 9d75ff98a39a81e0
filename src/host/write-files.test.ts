import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import {
  closeSync,
  constants,
  lstatSync,
  mkdirSync,
  openSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHostFs } from "./host-fs.ts";
import { loadSyncfs } from "./syncfs.ts";
import { writeTemp } from "./write-group.ts";
import { HostFileKindError, HostPathError, type FileWrite, type HostFs } from "./types.ts";

let dir: string;
let root: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "gna-hostfs-group-"));
  root = join(dir, "root");
  mkdirSync(root);
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Every entry under the root (recursive), to prove that no temp file was left behind. */
const allEntries = (): string[] => readdirSync(root, { recursive: true, encoding: "utf8" }).sort();

describe("HostFs", () => {
  const failingSyncfs = () => false;
  describe.each([
    ["from libc", "auto"],
    ["off (fsync per file)", "off"],
    ["failing (fsync fallback)", failingSyncfs],
  ] as const)("writeFilesAtomic with syncfs %s", (_name, syncfs) => {
    let host: HostFs;
    beforeEach(() => {
      host = createHostFs(root, { syncfs });
    });

    test("should tell each member's producer when its bytes are written, so that the next member may reuse them", async () => {
      const scratch = new Uint8Array(8);
      const events: string[] = [];
      const member = (name: string): FileWrite => ({
        path: `/etc/reuse/${name}`,
        data: () => {
          events.push(`data ${name}`);
          scratch.set(new TextEncoder().encode(name.padEnd(8, ".")));
          return scratch;
        },
        written: () => events.push(`written ${name}`),
        mode: 0o644,
      });
      await host.writeFilesAtomic([member("one")]);
      await host.writeFilesAtomic([member("two")]);
      expect(events).toEqual(["data one", "written one", "data two", "written two"]);
      expect(readFileSync(join(root, "etc/reuse/one"), "utf8")).toBe("one.....");
      expect(readFileSync(join(root, "etc/reuse/two"), "utf8")).toBe("two.....");
    });

    test("should make a late member's text only after every other member's temp was written", async () => {
      const events: string[] = [];
      const member = (name: string): FileWrite => ({
        path: `/etc/late/${name}`,
        data: () => {
          events.push(`data ${name}`);
          return new TextEncoder().encode(name);
        },
        written: () => events.push(`written ${name}`),
        mode: 0o644,
      });
      const record: FileWrite = {
        path: "/var/lib/record.yaml",
        data: () => {
          events.push("data record");
          return new TextEncoder().encode("record: é\n");
        },
        mode: 0o600,
        late: true,
      };
      await host.writeFilesAtomic([record, ...["a", "b", "c"].map(member)]);
      expect(events.slice(-1)).toEqual(["data record"]);
      expect(events.filter((e) => e.startsWith("written"))).toHaveLength(3);
      expect(readFileSync(join(root, "var/lib/record.yaml"), "utf8")).toBe("record: é\n");
      expect(statSync(join(root, "var/lib/record.yaml")).mode & 0o7777).toBe(0o600);
      expect(readFileSync(join(root, "etc/late/c"), "utf8")).toBe("c");
    });

    test("should leave no temp and the old files when a late member's text cannot be made", async () => {
      await host.writeFilesAtomic([{ path: "/etc/late/a", data: "old", mode: 0o644 }]);
      const failing: FileWrite = {
        path: "/var/lib/record.yaml",
        data: () => {
          throw new Error("encoder failed");
        },
        mode: 0o600,
        late: true,
      };
      await expect(host.writeFilesAtomic([failing, { path: "/etc/late/a", data: "new", mode: 0o644 }])).rejects.toThrow("encoder failed");
      expect(readFileSync(join(root, "etc/late/a"), "utf8")).toBe("old");
      expect(allEntries()).toEqual(["etc", "etc/late", "etc/late/a", "var", "var/lib"]);
    });

    test("should write every file with its exact mode under umask 077 and create parents 0755", async () => {
      const previous = process.umask(0o077);
      try {
        await host.writeFilesAtomic([
          { path: "/etc/a/one", data: "1", mode: 0o644 },
          { path: "/etc/a/two", data: new TextEncoder().encode("2"), mode: 0o777 },
          { path: "/opt/bin/three", data: "3", mode: 0o4755 },
        ]);
      } finally {
        process.umask(previous);
      }
      expect(readFileSync(join(root, "etc/a/one"), "utf8")).toBe("1");
      expect(readFileSync(join(root, "etc/a/two"), "utf8")).toBe("2");
      expect(statSync(join(root, "etc/a/one")).mode & 0o7777).toBe(0o644);
      expect(statSync(join(root, "etc/a/two")).mode & 0o7777).toBe(0o777);
      expect(statSync(join(root, "opt/bin/three")).mode & 0o7777).toBe(0o4755);
      expect(statSync(join(root, "etc/a")).mode & 0o7777).toBe(0o755);
      expect(statSync(join(root, "opt/bin")).mode & 0o7777).toBe(0o755);
      expect(allEntries()).toEqual(["etc", "etc/a", "etc/a/one", "etc/a/two", "opt", "opt/bin", "opt/bin/three"]);
    });

    test("should write exact modes under umask 022, those it clears and special bits included", async () => {
      const previous = process.umask(0o022);
      try {
        await host.writeFilesAtomic([
          { path: "/m/a", data: "a", mode: 0o644 },
          { path: "/m/b", data: "b", mode: 0o600 },
          { path: "/m/c", data: "c", mode: 0o777 },
          { path: "/m/d", data: "d", mode: 0o2755 },
          { path: "/m/e", data: "e", mode: 0o000 },
        ]);
      } finally {
        process.umask(previous);
      }
      const modes = ["a", "b", "c", "d", "e"].map((n) => statSync(join(root, "m", n)).mode & 0o7777);
      expect(modes).toEqual([0o644, 0o600, 0o777, 0o2755, 0o000]);
      expect(readFileSync(join(root, "m/c"), "utf8")).toBe("c");
      expect(allEntries()).toEqual(["m", "m/a", "m/b", "m/c", "m/d", "m/e"]);
    });

    test("should call a member's data function once, when its temp is written", async () => {
      let calls = 0;
      const lazy = () => {
        calls++;
        return new TextEncoder().encode("made late");
      };
      await host.writeFilesAtomic([
        { path: "/l/lazy", data: lazy, mode: 0o640 },
        { path: "/l/text", data: "text", mode: 0o644 },
      ]);
      expect(calls).toBe(1);
      expect(readFileSync(join(root, "l/lazy"), "utf8")).toBe("made late");
      expect(statSync(join(root, "l/lazy")).mode & 0o7777).toBe(0o640);
    });

    test("should replace existing files and correct their modes", async () => {
      await host.writeFilesAtomic([
        { path: "/a", data: "old-a", mode: 0o777 },
        { path: "/b", data: "old-b", mode: 0o600 },
      ]);
      await host.writeFilesAtomic([
        { path: "/a", data: "new-a", mode: 0o600 },
        { path: "/b", data: "new-b", mode: 0o640 },
      ]);
      expect(readFileSync(join(root, "a"), "utf8")).toBe("new-a");
      expect(statSync(join(root, "a")).mode & 0o7777).toBe(0o600);
      expect(statSync(join(root, "b")).mode & 0o7777).toBe(0o640);
      expect(allEntries()).toEqual(["a", "b"]);
    });

    test("should replace a symlink at a target instead of writing through it", async () => {
      writeFileSync(join(root, "real"), "untouched");
      symlinkSync("/real", join(root, "link"));
      await host.writeFilesAtomic([
        { path: "/link", data: "file now", mode: 0o644 },
        { path: "/other", data: "x", mode: 0o644 },
      ]);
      expect(lstatSync(join(root, "link")).isFile()).toBe(true);
      expect(readFileSync(join(root, "link"), "utf8")).toBe("file now");
      expect(readFileSync(join(root, "real"), "utf8")).toBe("untouched");
    });

    test("should write nothing when one target is a directory", async () => {
      mkdirSync(join(root, "etc/dir"), { recursive: true });
      const group: FileWrite[] = [
        { path: "/etc/first", data: "1", mode: 0o644 },
        { path: "/etc/dir", data: "2", mode: 0o644 },
      ];
      await expect(host.writeFilesAtomic(group)).rejects.toBeInstanceOf(HostFileKindError);
      expect(allEntries()).toEqual(["etc", "etc/dir"]);
    });

    test("should write nothing when one target escapes the root through a symlink", async () => {
      writeFileSync(join(dir, "outside"), "outside");
      symlinkSync("../outside", join(root, "escape"));
      const group: FileWrite[] = [
        { path: "/fine", data: "1", mode: 0o644 },
        { path: "/escape", data: "2", mode: 0o644 },
        { path: "/escape/x", data: "3", mode: 0o644 },
      ];
      await expect(host.writeFilesAtomic(group)).rejects.toBeInstanceOf(HostPathError);
      expect(readdirSync(root).sort()).toEqual(["escape"]);
      expect(readFileSync(join(dir, "outside"), "utf8")).toBe("outside");
    });

    test("should resolve a parent shared by several members through its symlink, and name the file when a parent escapes", async () => {
      mkdirSync(join(root, "real"));
      symlinkSync("/real", join(root, "via"));
      const group: FileWrite[] = [
        { path: "/via/a", data: "1", mode: 0o644 },
        { path: "/via/b", data: "2", mode: 0o600 },
        { path: "/via/new/c", data: "3", mode: 0o640 },
      ];
      await host.writeFilesAtomic(group);
      expect(allEntries()).toEqual(["real", "real/a", "real/b", "real/new", "real/new/c", "via"]);
      expect(readFileSync(join(root, "real/b"), "utf8")).toBe("2");
      symlinkSync("../..", join(root, "out"));
      await expect(host.writeFilesAtomic([{ path: "/out/x/f", data: "4", mode: 0o644 }])).rejects.toThrow(
        new HostPathError("/out/x/f", "a symlink points outside the root"),
      );
    });

    test("should complete a group on a second attempt after some files were written", async () => {
      const group: FileWrite[] = [
        { path: "/d/one", data: "1", mode: 0o600 },
        { path: "/d/two", data: "2", mode: 0o644 },
      ];
      await host.writeFilesAtomic(group.slice(0, 1)); // a crash after the first file
      await host.writeFilesAtomic(group);
      expect(readFileSync(join(root, "d/one"), "utf8")).toBe("1");
      expect(readFileSync(join(root, "d/two"), "utf8")).toBe("2");
      expect(allEntries()).toEqual(["d", "d/one", "d/two"]);
    });

    test("should write a group spread over many directories", async () => {
      const group = Array.from({ length: 40 }, (_, i) => ({ path: `/spread/d${i}/f`, data: `${i}`, mode: 0o640 }));
      await host.writeFilesAtomic(group);
      await host.writeFilesAtomic(group.map((f) => ({ ...f, data: `${f.data}!` })));
      for (let i = 0; i < 40; i++) {
        expect(readFileSync(join(root, `spread/d${i}/f`), "utf8")).toBe(`${i}!`);
        expect(statSync(join(root, `spread/d${i}/f`)).mode & 0o7777).toBe(0o640);
      }
      expect(allEntries()).toHaveLength(1 + 40 * 2);
    });

    test("should place members beside the root, in parents the group creates and under an unnormalised path alike", async () => {
      const group: FileWrite[] = [
        { path: "/top", data: "t", mode: 0o644 },
        { path: "/made/by/group/a", data: "a", mode: 0o600 },
        { path: "/made//by/./group/b", data: "b", mode: 0o600 },
        { path: "/top-two", data: "u", mode: 0o644 },
      ];
      await host.writeFilesAtomic(group);
      await host.writeFilesAtomic(group.map((f) => ({ ...f, data: `${String(f.data)}!` })));
      expect(readFileSync(join(root, "top"), "utf8")).toBe("t!");
      expect(readFileSync(join(root, "top-two"), "utf8")).toBe("u!");
      expect(readFileSync(join(root, "made/by/group/a"), "utf8")).toBe("a!");
      expect(readFileSync(join(root, "made/by/group/b"), "utf8")).toBe("b!");
      expect(statSync(join(root, "made/by/group")).mode & 0o7777).toBe(0o755);
      expect(allEntries()).toEqual(["made", "made/by", "made/by/group", "made/by/group/a", "made/by/group/b", "top", "top-two"]);
    });

    test("should accept an empty group", async () => {
      await host.writeFilesAtomic([]);
      expect(allEntries()).toEqual([]);
    });

    test("should never show a partial file to a concurrent reader", async () => {
      const size = 2 << 20;
      const version = (c: number) => [0, 1, 2].map((i) => ({ path: `/var/big-${i}`, data: new Uint8Array(size).fill(c), mode: 0o644 }));
      await host.writeFilesAtomic(version(0x61));
      const real = join(root, "var/big-1");
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
      })();
      for (let i = 0; i < 6; i++) await host.writeFilesAtomic(version(i % 2 === 0 ? 0x62 : 0x61));
      writing = false;
      await reader;
      expect([...seen].filter((s) => s.startsWith("torn"))).toEqual([]);
      expect(allEntries()).toEqual(["var", "var/big-0", "var/big-1", "var/big-2"]);
    });
  });
});

// A directory with many members of a group is read once (readdir with the entries' types) instead of an lstat per
// member; with few members each is lstat'ed. Both must find the same things at the targets.
describe.each([
  ["few members (an lstat each)", 3],
  ["many members (the directory read once)", 40],
])("a group with %s in one directory", (_name, members) => {
  const group = (first: string): FileWrite[] => [
    { path: `/etc/many/${first}`, data: "new", mode: 0o644 },
    ...Array.from({ length: members - 1 }, (_, i) => ({ path: `/etc/many/file-${i}`, data: `new ${i}`, mode: 0o640 })),
  ];
  beforeEach(() => {
    mkdirSync(join(root, "etc/many"), { recursive: true });
    writeFileSync(join(root, "etc/many/file-0"), "old 0");
    writeFileSync(join(root, "real"), "untouched");
  });

  test("should replace existing files and links at targets, and create the missing ones", async () => {
    symlinkSync("/real", join(root, "etc/many/link"));
    await createHostFs(root).writeFilesAtomic(group("link"));
    expect(lstatSync(join(root, "etc/many/link")).isFile()).toBe(true);
    expect(readFileSync(join(root, "etc/many/link"), "utf8")).toBe("new");
    expect(readFileSync(join(root, "real"), "utf8")).toBe("untouched");
    expect(readFileSync(join(root, "etc/many/file-0"), "utf8")).toBe("new 0");
    expect(statSync(join(root, `etc/many/file-${members - 2}`)).mode & 0o7777).toBe(0o640);
    expect(readdirSync(join(root, "etc/many")).length).toBe(members);
  });

  test("should write nothing when a target is a directory or a FIFO", async () => {
    mkdirSync(join(root, "etc/many/dir"));
    Bun.spawnSync(["mkfifo", join(root, "etc/many/fifo")]);
    const host = createHostFs(root);
    await expect(host.writeFilesAtomic(group("dir"))).rejects.toThrow("it is a directory");
    await expect(host.writeFilesAtomic(group("fifo"))).rejects.toThrow("it is a non-regular file");
    expect(readdirSync(join(root, "etc/many")).sort()).toEqual(["dir", "fifo", "file-0"]);
    expect(readFileSync(join(root, "etc/many/file-0"), "utf8")).toBe("old 0");
  });

  test("should create the directory when it is missing, and refuse a file where it should be", async () => {
    const host = createHostFs(root);
    await host.writeFilesAtomic(group("first").map((w) => ({ ...w, path: w.path.replace("/many/", "/new/") })));
    expect(readdirSync(join(root, "etc/new")).length).toBe(members);
    writeFileSync(join(root, "etc/plain"), "x");
    await expect(
      host.writeFilesAtomic(group("first").map((w) => ({ ...w, path: w.path.replace("/many/", "/plain/") }))),
    ).rejects.toBeInstanceOf(HostFileKindError);
  });
});

describe("writeFilesInPlace", () => {
  test("should have every file in place with its mode when it resolves, and settle durable after", async () => {
    const host = createHostFs(root);
    await host.writeFileAtomic("/etc/a/one", "old", 0o600);
    const { durable } = await host.writeFilesInPlace([
      { path: "/etc/a/one", data: "1", mode: 0o644 },
      { path: "/etc/b/two", data: "2", mode: 0o600 },
    ]);
    expect(readFileSync(join(root, "etc/a/one"), "utf8")).toBe("1");
    expect(statSync(join(root, "etc/a/one")).mode & 0o7777).toBe(0o644);
    expect(readFileSync(join(root, "etc/b/two"), "utf8")).toBe("2");
    await durable;
    expect(allEntries()).toEqual(["etc", "etc/a", "etc/a/one", "etc/b", "etc/b/two"]);
    expect(await (await host.writeFilesInPlace([])).durable).toBeUndefined();
  });
});

describe("writeFileAtomic without durability", () => {
  test.each([
    ["the mode the umask leaves alone (one-job write)", 0o022, 0o640],
    ["a mode the umask would narrow (fchmod)", 0o077, 0o644],
    ["a set-id mode", 0o022, 0o4755],
  ])("should replace the file with its exact mode and leave no temp: %s", async (_name, umask, mode) => {
    const host = createHostFs(root);
    await host.writeFileAtomic("/var/lib/state.json", "old", 0o600);
    const previous = process.umask(umask);
    try {
      await host.writeFileAtomic("/var/lib/state.json", "new", mode, { durable: false });
    } finally {
      process.umask(previous);
    }
    expect(readFileSync(join(root, "var/lib/state.json"), "utf8")).toBe("new");
    expect(statSync(join(root, "var/lib/state.json")).mode & 0o7777).toBe(mode);
    expect(allEntries()).toEqual(["var", "var/lib", "var/lib/state.json"]);
  });
});

describe("loadSyncfs", () => {
  test("should be undefined when the library cannot be opened", async () => {
    expect(await loadSyncfs("libdoes-not-exist.so.0")).toBeUndefined();
  });

  test("should flush the filesystem of an open directory", async () => {
    const syncfs = await loadSyncfs();
    expect(syncfs).toBeDefined();
    const fd = openSync(root, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      expect(syncfs?.(fd)).toBe(true);
      expect(syncfs?.(-1)).toBe(false);
    } finally {
      closeSync(fd);
    }
  });
});

describe("writeTemp", () => {
  test.each([
    ["one call (no fsync, mode kept by the umask)", false, 0o022],
    ["open, fchmod, write, fsync", true, undefined],
  ] as const)("should leave a file that already has the temp's name alone (%s)", async (_name, fsync, umask) => {
    const temp = join(root, ".taken.tmp");
    writeFileSync(temp, "not ours");
    await expect(writeTemp(temp, "new", 0o644, fsync, umask)).rejects.toThrow(/EEXIST|exists/);
    expect(readFileSync(temp, "utf8")).toBe("not ours");
  });

  test("should write the temp in one call with the requested mode", async () => {
    const temp = join(root, ".one.tmp");
    await writeTemp(temp, new TextEncoder().encode("bytes"), 0o640, false, 0o022);
    expect(statSync(temp).mode & 0o7777).toBe(0o640);
    expect(readFileSync(temp, "utf8")).toBe("bytes");
  });
});
