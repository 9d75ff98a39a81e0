import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHostFs } from "./host-fs.ts";
import { type ChunkedData, HostFileKindError } from "./types.ts";
import { ChunkedWriteError } from "./write-chunked.ts";

let dir: string;
let root: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "gna-hostfs-chunked-"));
  root = join(dir, "root");
  mkdirSync(root);
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Every entry under the root (recursive), to prove that no temp file was left behind. */
const allEntries = (): string[] => readdirSync(root, { recursive: true, encoding: "utf8" }).sort();

/** Pushes `parts` through one reused buffer, as a streaming encoder does; throws before part `failAt`. */
const chunked = (parts: readonly string[], failAt = Number.POSITIVE_INFINITY): ChunkedData => ({
  writeTo(write) {
    const buf = new Uint8Array(64);
    for (const [i, part] of parts.entries()) {
      if (i >= failAt) throw new Error("encoder failed");
      const { written } = new TextEncoder().encodeInto(part, buf);
      write(buf.subarray(0, written));
      buf.fill(0x21); // reused: the chunk must be written when `write` returns
    }
  },
});

describe("writeFileAtomic with chunked data", () => {
  test.each([
    ["durable", true],
    ["not durable", false],
  ] as const)("should write every chunk in order with the exact mode (%s)", async (_name, durable) => {
    const host = createHostFs(root);
    const previous = process.umask(0o077);
    try {
      await host.writeFileAtomic("/var/lib/a.yaml", chunked(["a: 1\n", "b: é ✓\n", "", "c: 😀\n"]), 0o600, { durable });
      await host.writeFileAtomic("/var/lib/b.yaml", chunked(["x\n"]), 0o755, { durable });
    } finally {
      process.umask(previous);
    }
    expect(readFileSync(join(root, "var/lib/a.yaml"), "utf8")).toBe("a: 1\nb: é ✓\nc: 😀\n");
    expect(statSync(join(root, "var/lib/a.yaml")).mode & 0o7777).toBe(0o600);
    expect(statSync(join(root, "var/lib/b.yaml")).mode & 0o7777).toBe(0o755);
    expect(allEntries()).toEqual(["var", "var/lib", "var/lib/a.yaml", "var/lib/b.yaml"]);
  });

  test("should write an empty producer as an empty file", async () => {
    const host = createHostFs(root);
    await host.writeFileAtomic("/e", chunked([]), 0o600);
    expect(readFileSync(join(root, "e"), "utf8")).toBe("");
  });

  test("should replace a file and a symlink at the target, not write through it", async () => {
    const host = createHostFs(root);
    writeFileSync(join(root, "old"), "old\n", { mode: 0o644 });
    writeFileSync(join(root, "elsewhere"), "keep\n");
    symlinkSync("/elsewhere", join(root, "link"));
    await host.writeFileAtomic("/old", chunked(["new\n"]), 0o600);
    await host.writeFileAtomic("/link", chunked(["linked\n"]), 0o600);
    expect(readFileSync(join(root, "old"), "utf8")).toBe("new\n");
    expect(statSync(join(root, "old")).mode & 0o7777).toBe(0o600);
    expect(readFileSync(join(root, "link"), "utf8")).toBe("linked\n");
    expect(readFileSync(join(root, "elsewhere"), "utf8")).toBe("keep\n");
  });

  test("should keep the old file, leave no temp and name the file when the producer fails half-way", async () => {
    const host = createHostFs(root);
    await host.writeFileAtomic("/var/lib/state.yaml", "old\n", 0o600);
    const failing = chunked(["new 1\n", "new 2\n", "new 3\n"], 2);
    const err = await host.writeFileAtomic("/var/lib/state.yaml", failing, 0o600).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ChunkedWriteError);
    expect((err as Error).message).toBe('cannot write "/var/lib/state.yaml": encoder failed');
    expect(readFileSync(join(root, "var/lib/state.yaml"), "utf8")).toBe("old\n");
    expect(allEntries()).toEqual(["var", "var/lib", "var/lib/state.yaml"]);
  });

  test("should refuse a directory at the target before the producer runs", async () => {
    const host = createHostFs(root);
    mkdirSync(join(root, "d"));
    let ran = false;
    const data: ChunkedData = {
      writeTo() {
        ran = true;
      },
    };
    await expect(host.writeFileAtomic("/d", data, 0o600)).rejects.toBeInstanceOf(HostFileKindError);
    expect(ran).toBe(false);
    expect(allEntries()).toEqual(["d"]);
  });
});

describe("a group with a chunked member", () => {
  test.each([
    ["from libc", "auto"],
    ["off (fsync per file)", "off"],
  ] as const)("should write it with the others, exact modes (syncfs %s)", async (_name, syncfs) => {
    const host = createHostFs(root, { syncfs });
    await host.writeFilesAtomic([
      { path: "/var/lib/changes.yaml", data: chunked(["x: é\n", "y: 😀\n"]), mode: 0o600 },
      { path: "/etc/a", data: "a", mode: 0o644 },
    ]);
    const { durable } = await host.writeFilesInPlace([
      { path: "/etc/b", data: () => new TextEncoder().encode("b"), mode: 0o640 },
      { path: "/var/lib/changes.yaml", data: chunked(["z\n"]), mode: 0o600 },
    ]);
    await durable;
    expect(readFileSync(join(root, "var/lib/changes.yaml"), "utf8")).toBe("z\n");
    expect(statSync(join(root, "var/lib/changes.yaml")).mode & 0o7777).toBe(0o600);
    expect(readFileSync(join(root, "etc/b"), "utf8")).toBe("b");
    expect(allEntries()).toEqual(["etc", "etc/a", "etc/b", "var", "var/lib", "var/lib/changes.yaml"]);
  });

  test("should write nothing of the group, leave no temp and name the file when its producer fails", async () => {
    const host = createHostFs(root);
    await host.writeFileAtomic("/var/lib/changes.yaml", "old\n", 0o600);
    const err = await host
      .writeFilesAtomic([
        { path: "/var/lib/changes.yaml", data: chunked(["new 1\n", "new 2\n"], 1), mode: 0o600 },
        { path: "/etc/a", data: "a", mode: 0o644 },
      ])
      .catch((e: unknown) => e);
    expect((err as Error).message).toBe('cannot write "/var/lib/changes.yaml": encoder failed');
    expect(readFileSync(join(root, "var/lib/changes.yaml"), "utf8")).toBe("old\n");
    expect(allEntries()).toEqual(["etc", "var", "var/lib", "var/lib/changes.yaml"]);
  });
});
