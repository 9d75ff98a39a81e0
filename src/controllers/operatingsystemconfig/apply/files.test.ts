import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHostFs, type HostFs } from "../../../host/index.ts";
import { nopLogger } from "../../../log/index.ts";
import { emptyChanges } from "../../../osc/index.ts";
import { ChangesStore } from "./changes-store.ts";
import type { StepContext } from "./context.ts";
import type { ApplyPorts } from "./ports.ts";
import { FileApplyError, placeFile, writeChangedFiles, writeImageFiles } from "./files.ts";
import { planChanges } from "../plan/content.ts";
import type { Kube } from "../../../kube/index.ts";

const bytes = (s: string) => new TextEncoder().encode(s);

describe("placeFile", () => {
  let root: string;
  let host: HostFs;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "osc-files-"));
    host = createHostFs(root);
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  test("should write into an existing directory with the exact mode", async () => {
    await host.ensureDir("/etc", 0o755);
    await placeFile(host, "/etc/a", bytes("a"), 0o777);
    expect(await host.readText("/etc/a")).toBe("a");
    expect((await host.stat("/etc/a"))?.mode).toBe(0o777);
  });

  test("should create missing parent directories with mode 0755", async () => {
    await placeFile(host, "/new/dir/a", bytes("a"), 0o640);
    expect((await host.stat("/new/dir"))?.mode).toBe(0o755);
    expect((await host.stat("/new/dir/a"))?.mode).toBe(0o640);
  });

  test("should overwrite an existing file and correct its mode", async () => {
    await host.writeFileAtomic("/a", "old", 0o777);
    await placeFile(host, "/a", bytes("new"), 0o600);
    expect(await host.readText("/a")).toBe("new");
    expect((await host.stat("/a"))?.mode).toBe(0o600);
  });

  test("should refuse a directory as destination", async () => {
    await host.ensureDir("/a", 0o755);
    await expect(placeFile(host, "/a", bytes("x"), 0o600)).rejects.toThrow();
    expect((await host.stat("/a"))?.kind).toBe("dir");
  });

  test("should replace a stale .name.tmp file", async () => {
    await host.writeFileAtomic("/d/.a.tmp", "stale", 0o600);
    await placeFile(host, "/d/a", bytes("a"), 0o644);
    expect(await host.readText("/d/a")).toBe("a");
    expect(await host.stat("/d/.a.tmp")).toBeUndefined();
  });

  test("should fail when .name.tmp is a directory instead of reporting success", async () => {
    await host.ensureDir("/d/.a.tmp", 0o755);
    await expect(placeFile(host, "/d/a", bytes("a"), 0o644)).rejects.toBeInstanceOf(FileApplyError);
    expect(await host.stat("/d/a")).toBeUndefined();
  });
});

describe("writeChangedFiles", () => {
  let root: string;
  let host: HostFs;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "osc-files-group-"));
    host = createHostFs(root);
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const write = async (paths: string[]) => {
    const changes = emptyChanges("s");
    changes.files.changed.push(
      ...paths.map((path) => ({ path, permissions: 0o644, content: { inline: { encoding: "", data: `new ${path}` } } })),
    );
    const signal = new AbortController().signal;
    const planned = await planChanges({} as Kube, changes, "amd64", signal);
    const deps = { host, log: nopLogger } as unknown as ApplyPorts;
    const ctx: StepContext = { ports: deps, store: new ChangesStore(changes, async () => {}), node: undefined, signal };
    await writeChangedFiles(ctx, planned);
    return changes;
  };

  test("should write every file of the group, remove a stale helper file beside one of them and record them done", async () => {
    await host.writeFileAtomic("/d/.b.tmp", "stale", 0o600);
    const changes = await write(["/d/a", "/d/b", "/e/c"]);
    expect(await Promise.all(["/d/a", "/d/b", "/e/c"].map((p) => host.readText(p)))).toEqual(["new /d/a", "new /d/b", "new /e/c"]);
    expect(await host.stat("/d/.b.tmp")).toBeUndefined();
    expect(changes.files.changed).toEqual([]);
  });

  test("should write nothing when a member's helper name is a directory", async () => {
    await host.ensureDir("/d/.b.tmp", 0o755);
    await expect(write(["/d/a", "/d/b"])).rejects.toBeInstanceOf(FileApplyError);
    expect(await host.stat("/d/a")).toBeUndefined();
  });
});

describe("writeImageFiles from the stage", () => {
  let root: string;
  let host: HostFs;
  const blob = "/var/lib/gardener-node-agent/staged/blobs/sha256-0a";
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "osc-files-staged-"));
    host = createHostFs(root);
    await host.ensureDir("/var/lib/gardener-node-agent/staged/blobs", 0o700);
    await host.writeFileAtomic(blob, "tool bytes", 0o600);
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const apply = async (fs: HostFs, path = "/opt/bin/tool") => {
    const changes = emptyChanges("s");
    changes.files.changed.push({ path, permissions: 0o755, content: { imageRef: { image: "r/tool:v1", filePathInImage: "/tool" } } });
    const staged = { imageFile: async () => ({ bytes: bytes("tool bytes"), blob }), secretFile: async () => undefined };
    const ports = { host: fs, log: nopLogger, arch: "amd64", staged, extractImageFile: () => Promise.reject(new Error("no pull")) };
    const signal = new AbortController().signal;
    await writeImageFiles({
      ports: ports as unknown as ApplyPorts,
      store: new ChangesStore(changes, async () => {}),
      node: undefined,
      signal,
    });
    expect(changes.files.changed).toEqual([]);
    return statSync(join(root, path));
  };

  test("should rename a hard link of the blob into place: one inode, the file's mode, no second copy", async () => {
    const placed = await apply(host);
    const b = statSync(join(root, blob));
    expect([placed.ino, placed.nlink, placed.mode & 0o777]).toEqual([b.ino, 2, 0o755]);
    expect(await host.readText("/opt/bin/tool")).toBe("tool bytes");
    // A second live file with the same content gets its own copy: a chmod for it must not change the first.
    const second = await apply(host, "/opt/bin/other");
    expect(second.ino).not.toBe(b.ino);
    expect(statSync(join(root, blob)).nlink).toBe(2);
  });

  test("should copy as before when the file system refuses the link", async () => {
    const refusing: HostFs = {
      ...host,
      linkAtomic: () => Promise.reject(Object.assign(new Error("EXDEV: cross-device link not permitted"), { code: "EXDEV" })),
    };
    const placed = await apply(refusing);
    const b = statSync(join(root, blob));
    expect([placed.ino === b.ino, b.nlink, b.mode & 0o777, placed.mode & 0o777]).toEqual([false, 1, 0o600, 0o755]);
    expect(await host.readText("/opt/bin/tool")).toBe("tool bytes");
  });
});
