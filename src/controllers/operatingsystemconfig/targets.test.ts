import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHostFs, type HostFs } from "../../host/index.ts";
import { emptyChanges, type OscChanges } from "../../osc/index.ts";
import { OscInputError } from "./input-error.ts";
import { checkApplyTargets } from "./targets.ts";

const withFiles = (...paths: string[]): OscChanges => {
  const c = emptyChanges("sum");
  for (const path of paths) c.files.changed.push({ path, content: { inline: { encoding: "", data: "x" } } });
  return c;
};

describe("checkApplyTargets", () => {
  let root: string;
  let host: HostFs;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "osc-targets-"));
    host = createHostFs(root);
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  test("names the first component on the way that is not a directory", async () => {
    await host.writeFileAtomic("/etc/blocked", "a file", 0o644);
    const err = await checkApplyTargets(host, withFiles("/etc/ok/a", "/etc/blocked/deeper/b")).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OscInputError);
    expect((err as Error).message).toBe(
      'file "/etc/blocked/deeper/b": cannot write "/etc/blocked/deeper/b": "/etc/blocked" is not a directory',
    );
  });

  test("refuses a directory where a file goes and passes directories still to be created", async () => {
    await host.ensureDir("/etc/app/conf");
    await expect(checkApplyTargets(host, withFiles("/new/dir/a"))).resolves.toBeDefined();
    const err = await checkApplyTargets(host, withFiles("/etc/app/conf")).catch((e: unknown) => e);
    expect((err as Error).message).toBe('file "/etc/app/conf": cannot write "/etc/app/conf": "/etc/app/conf" is a directory');
  });

  test("returns the entry names of the files' directories, none for a missing one", async () => {
    await host.writeFileAtomic("/etc/app/.a.tmp", "upstream's helper", 0o600);
    await host.writeFileAtomic("/etc/app/a", "old", 0o644);
    const listings = await checkApplyTargets(host, withFiles("/etc/app/a", "/etc/app/b", "/new/c"));
    expect([...(listings.get("/etc/app") ?? [])].sort()).toEqual([".a.tmp", "a"]);
    expect([...(listings.get("/new") ?? [])]).toEqual([]);
  });
});
