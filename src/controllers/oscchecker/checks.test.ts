import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHostFs } from "../../host/index.ts";
import type { HostFs } from "../../host/index.ts";
import { checkFile, checkUnit, resolveUnitPath } from "./checks.ts";
import type { CheckedFile, CheckedUnit } from "./last-applied.ts";

let root: string;
let host: HostFs;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "osc-checks-"));
  host = createHostFs(root);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const sha = (s: string) => new Bun.CryptoHasher("sha256").update(s).digest("hex");
const inlineFile = (path: string, data: string, encoding = ""): CheckedFile => ({ path, inline: { encoding, data }, hasImageRef: false });
const unit = (u: Partial<CheckedUnit> & { name: string }): CheckedUnit => ({
  enable: undefined,
  content: undefined,
  dropIns: [],
  filePaths: [],
  ...u,
});

describe("checkFile", () => {
  test("should report nothing when the file has the expected bytes", async () => {
    await host.writeFileAtomic("/etc/testfile", "test", 0o644);
    expect(await checkFile(host, inlineFile("/etc/testfile", "test"))).toBeUndefined();
  });
  test("should report a missing file with its path", async () => {
    expect(await checkFile(host, inlineFile("/etc/testfile", "test"))).toEqual({
      reason: "FileMissing",
      message: "File /etc/testfile is missing",
    });
  });
  test("should report different bytes with both SHA-256 sums", async () => {
    await host.writeFileAtomic("/etc/testfile", "other", 0o644);
    expect(await checkFile(host, inlineFile("/etc/testfile", "test"))).toEqual({
      reason: "FileMismatch",
      message: `File /etc/testfile mismatch: expected ${sha("test")}, actual ${sha("other")}`,
    });
  });
  test.each(["b64", "base64"])("should decode %s content before comparing", async (encoding) => {
    await host.writeFileAtomic("/etc/b", "hello", 0o644);
    expect(await checkFile(host, inlineFile("/etc/b", btoa("hello"), encoding))).toBeUndefined();
  });
  test("should compare a plain encoding verbatim and read the cleaned path", async () => {
    await host.writeFileAtomic("/etc/p", "x", 0o644);
    expect(await checkFile(host, inlineFile("/etc//sub/../p", "x", "plain"))).toBeUndefined();
  });
  test("should report content that is not base64", async () => {
    expect(await checkFile(host, inlineFile("/etc/b", "not base64!", "b64"))).toEqual({
      reason: "FileDecodeError",
      message: "Failed to decode base64 content for file /etc/b",
    });
  });
  test("should report an unsupported encoding", async () => {
    expect(await checkFile(host, inlineFile("/etc/g", "x", "gzip"))).toEqual({
      reason: "FileUnsupportedEncoding",
      message: "Unsupported encoding gzip for file /etc/g",
    });
  });
  test("should report a directory in place of the file as a read error", async () => {
    await host.ensureDir("/etc/dir");
    expect(await checkFile(host, inlineFile("/etc/dir", "x"))).toEqual({
      reason: "FileReadError",
      message: "Failed to read file /etc/dir",
    });
  });
  test.each([
    ["no inline content", { path: "/etc/none", inline: undefined, hasImageRef: false }],
    ["empty data", inlineFile("/etc/none", "")],
    ["an image reference", { ...inlineFile("/etc/none", "x"), hasImageRef: true }],
  ])("should skip a file with %s", async (_what, file) => {
    expect(await checkFile(host, file)).toBeUndefined();
  });
});

describe("resolveUnitPath", () => {
  test("should prefer /etc over /usr/lib over /lib", async () => {
    await host.writeFileAtomic("/lib/systemd/system/a.service", "lib", 0o644);
    expect(await resolveUnitPath(host, "a.service")).toBe("/lib/systemd/system/a.service");
    await host.writeFileAtomic("/usr/lib/systemd/system/a.service", "usr", 0o644);
    expect(await resolveUnitPath(host, "a.service")).toBe("/usr/lib/systemd/system/a.service");
    await host.writeFileAtomic("/etc/systemd/system/a.service", "etc", 0o644);
    expect(await resolveUnitPath(host, "a.service")).toBe("/etc/systemd/system/a.service");
  });
  test("should follow a link and skip a dangling one", async () => {
    await host.ensureDir("/etc/systemd/system");
    await host.symlink("/nowhere/a.service", "/etc/systemd/system/a.service");
    expect(await resolveUnitPath(host, "a.service")).toBeUndefined();
    await host.writeFileAtomic("/lib/systemd/system/a.service", "lib", 0o644);
    await host.symlink("/lib/systemd/system/a.service", "/etc/systemd/system/a.service");
    expect(await resolveUnitPath(host, "a.service")).toBe("/etc/systemd/system/a.service");
  });
});

describe("checkUnit", () => {
  const loaded = new Set<string>(["loaded.service"]);
  const reasons = async (u: CheckedUnit) => (await checkUnit(host, u, loaded)).map((f) => `${f.reason}: ${f.message}`);

  test("should report a unit found in no unit directory once and check nothing else", async () => {
    const u = unit({ name: "test.service", content: "x", enable: true, dropIns: [{ name: "d.conf", content: "" }], filePaths: ["/x"] });
    expect(await reasons(u)).toEqual(["UnitFileMissing: Unit file test.service is missing"]);
  });
  test("should compare the content of the unit file", async () => {
    await host.writeFileAtomic("/etc/systemd/system/test.service", "[Unit]\n", 0o644);
    expect(await reasons(unit({ name: "test.service", content: "[Unit]\n" }))).toEqual([]);
    expect(await reasons(unit({ name: "test.service", content: "[Unit]\nA=b\n" }))).toEqual([
      "UnitMismatch: Unit test.service content mismatch",
    ]);
    expect(await reasons(unit({ name: "test.service" }))).toEqual([]);
  });
  test("should look for drop-ins beside the unit file that was found", async () => {
    await host.writeFileAtomic("/usr/lib/systemd/system/test.service", "u", 0o644);
    const u = unit({ name: "test.service", dropIns: [{ name: "10-override.conf", content: "drop" }] });
    expect(await reasons(u)).toEqual(["DropInMissing: Drop-in 10-override.conf for unit test.service is missing"]);
    await host.writeFileAtomic("/usr/lib/systemd/system/test.service.d/10-override.conf", "other", 0o644);
    expect(await reasons(u)).toEqual(["DropInMismatch: Drop-in 10-override.conf for unit test.service mismatch"]);
    await host.writeFileAtomic("/usr/lib/systemd/system/test.service.d/10-override.conf", "drop", 0o644);
    expect(await reasons(u)).toEqual([]);
  });
  test.each([
    ["a loaded unit expected enabled", "loaded.service", "[Install]\n", true, []],
    [
      "a loaded unit expected disabled",
      "loaded.service",
      "[Install]\n",
      false,
      ["UnitEnableMismatch: Unit loaded.service enable state mismatch: expected false, actual true"],
    ],
    [
      "an unloaded unit with [Install] expected enabled",
      "other.service",
      "[Install]\n",
      true,
      ["UnitEnableMismatch: Unit other.service enable state mismatch: expected true, actual false"],
    ],
    ["an unloaded static unit expected enabled", "other.service", "[Service]\n", true, []],
    ["an unloaded unit expected disabled", "other.service", "[Install]\n", false, []],
  ])("should judge the enable state of %s", async (_what, name, content, enable, want) => {
    await host.writeFileAtomic(`/etc/systemd/system/${name}`, content, 0o644);
    expect(await reasons(unit({ name, enable }))).toEqual(want);
  });
  test("should report each dependency file that does not exist", async () => {
    await host.writeFileAtomic("/etc/systemd/system/test.service", "u", 0o644);
    await host.writeFileAtomic("/opt/bin/present", "p", 0o755);
    expect(await reasons(unit({ name: "test.service", filePaths: ["/opt/bin/present", "/opt/bin/absent"] }))).toEqual([
      "DependencyMissing: Dependency file /opt/bin/absent for unit test.service is missing",
    ]);
  });
});
