import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHostFs, type HostFs } from "../../../host/index.ts";
import { emptyChanges, type OscChanges } from "../../../osc/index.ts";
import { OscInputError } from "./input-error.ts";
import { checkApplyTargets } from "./targets.ts";

let root: string;
let host: HostFs;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "gna-targets-"));
  host = createHostFs(root);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const inline = (path: string) => ({ path, content: { inline: { encoding: "", data: "x" } } });
const withFiles = (...paths: string[]): OscChanges => {
  const c = emptyChanges("s");
  c.files.changed.push(...paths.map(inline));
  return c;
};

describe("checkApplyTargets", () => {
  test("should accept files in existing, missing and shared directories", async () => {
    mkdirSync(join(root, "etc/a"), { recursive: true });
    writeFileSync(join(root, "etc/a/old"), "old");
    const paths = Array.from({ length: 50 }, (_, i) => `/etc/${i % 2 === 0 ? "a" : "new/b"}/f-${i}`);
    await checkApplyTargets(host, withFiles("/etc/a/old", ...paths));
  });

  test("should name the first problem in the order of the change set, whichever directory is looked at first", async () => {
    mkdirSync(join(root, "etc/a/dir-here"), { recursive: true });
    mkdirSync(join(root, "etc/z"), { recursive: true });
    writeFileSync(join(root, "etc/file"), "not a directory");
    // Two problems in different directories: a directory where a file goes, and a file as a parent.
    const err = await checkApplyTargets(host, withFiles("/etc/z/fine", "/etc/a/dir-here", "/etc/file/x")).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OscInputError);
    expect((err as Error).message).toBe('file "/etc/a/dir-here": cannot write "/etc/a/dir-here": "/etc/a/dir-here" is a directory');
    const second = await checkApplyTargets(host, withFiles("/etc/file/x", "/etc/a/dir-here")).catch((e: unknown) => e);
    expect((second as Error).message).toBe('file "/etc/file/x": cannot write "/etc/file/x": "/etc/file" is not a directory');
  });

  test("should name the unit whose drop-in directory is taken by a file", async () => {
    mkdirSync(join(root, "etc/systemd/system"), { recursive: true });
    writeFileSync(join(root, "etc/systemd/system/u.service.d"), "a file");
    const c = emptyChanges("s");
    c.units.changed.push({
      name: "u.service",
      content: "[Service]",
      dropIns: [{ name: "d.conf", content: "x" }],
      dropInsChanges: { changed: [{ name: "d.conf", content: "x" }], deleted: [] },
    });
    await expect(checkApplyTargets(host, c)).rejects.toThrow('unit "u.service": cannot write "/etc/systemd/system/u.service.d"');
  });
});

describe("checkApplyTargets walking and listing", () => {
  test("names the first component on the way that is not a directory", async () => {
    mkdirSync(join(root, "etc"), { recursive: true });
    writeFileSync(join(root, "etc/blocked"), "a file");
    const err = await checkApplyTargets(host, withFiles("/etc/ok/a", "/etc/blocked/deeper/b")).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OscInputError);
    expect((err as Error).message).toBe(
      'file "/etc/blocked/deeper/b": cannot write "/etc/blocked/deeper/b": "/etc/blocked" is not a directory',
    );
  });

  test("returns the entry names of the files' directories, none for a missing one", async () => {
    mkdirSync(join(root, "etc/app"), { recursive: true });
    writeFileSync(join(root, "etc/app/.a.tmp"), "upstream's helper");
    writeFileSync(join(root, "etc/app/a"), "old");
    const listings = await checkApplyTargets(host, withFiles("/etc/app/a", "/etc/app/b", "/new/c"));
    expect([...(listings.get("/etc/app") ?? [])].sort()).toEqual([".a.tmp", "a"]);
    expect([...(listings.get("/new") ?? [])]).toEqual([]);
  });
});
