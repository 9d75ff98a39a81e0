import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHostFs } from "../host/index.ts";
import type { HostFs } from "../host/index.ts";
import type { Logger } from "../log/index.ts";
import { DataDeviceError, prepareKubeletDataDevice } from "./data-device.ts";
import type { CommandRunner, RunResult } from "./runner.ts";

const fixtures = join(import.meta.dir, "../../test/fixtures/lsblk");
const size = 53687091200;
const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };

const ok = (stdout = ""): RunResult => ({ code: 0, stdout, stderr: "" });

/** Answers blkid/lsblk from recorded outputs and records every call; everything else succeeds. */
function scriptedRunner(disks: string, mounts: string, overrides: Record<string, RunResult> = {}) {
  const calls: string[][] = [];
  const runner: CommandRunner = {
    async run(argv) {
      calls.push([...argv]);
      const line = argv.join(" ");
      const override = overrides[argv[0] ?? ""];
      if (override !== undefined) return override;
      if (argv[0] === "blkid") return { code: 2, stdout: "", stderr: "" };
      if (line === "lsblk -dbsnP -o NAME,PARTTYPE,FSTYPE,SIZE,PATH,TYPE") return ok(disks);
      if (line === "lsblk -dbsnP -o NAME,MOUNTPOINT,TYPE") return ok(mounts);
      return ok();
    },
  };
  return { runner, calls };
}

const fixture = async (name: string) => ({
  disks: await readFile(join(fixtures, `${name}.disks.txt`), "utf8"),
  mounts: await readFile(join(fixtures, `${name}.mounts.txt`), "utf8"),
});

const enumeration = [
  ["blkid", "--label", "KUBEDEV"],
  ["lsblk", "-dbsnP", "-o", "NAME,PARTTYPE,FSTYPE,SIZE,PATH,TYPE"],
  ["lsblk", "-dbsnP", "-o", "NAME,MOUNTPOINT,TYPE"],
];

describe("prepareKubeletDataDevice", () => {
  let root: string;
  let host: HostFs;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "gna-datadev-"));
    host = createHostFs(root);
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  test("does nothing when a filesystem labelled KUBEDEV exists", async () => {
    const { runner, calls } = scriptedRunner("", "", { blkid: ok("/dev/sdb\n") });
    expect(await prepareKubeletDataDevice({ host, runner, log: silent }, size)).toEqual({ action: "exists" });
    expect(calls).toEqual([["blkid", "--label", "KUBEDEV"]]);
  });

  test("formats, fills and mounts the one blank disk of exactly the configured size", async () => {
    const { disks, mounts } = await fixture("one-match");
    const { runner, calls } = scriptedRunner(disks, mounts);
    expect(await prepareKubeletDataDevice({ host, runner, log: silent }, size)).toEqual({ action: "formatted", device: "sdb" });
    expect(calls).toEqual([
      ...enumeration,
      [
        "mkfs.ext4",
        "-L",
        "KUBEDEV",
        "-O",
        "quota",
        "-E",
        "lazy_itable_init=0,lazy_journal_init=0,quotatype=usrquota:grpquota:prjquota",
        "/dev/sdb",
      ],
      ["mount", "LABEL=KUBEDEV", `${root}/tmp/varlibkubeletcp`],
      ["cp", "-a", `${root}/var/lib/kubelet/.`, `${root}/tmp/varlibkubeletcp/`],
      ["umount", `${root}/tmp/varlibkubeletcp`],
      ["mount", "LABEL=KUBEDEV", `${root}/var/lib/kubelet`, "-o", "defaults,prjquota,errors=remount-ro"],
    ]);
    expect((await host.stat("/var/lib/kubelet"))?.kind).toBe("dir");
  });

  test.each([
    ["none", "no disk has the configured size"],
    ["fstype", "the disk of the right size carries a filesystem"],
    ["partitions", "the disk of the right size has a partition table"],
    ["mounted-partition", "a partition named after the disk is mounted"],
  ])("fails with No kubelet data device found and formats nothing when %s (%s)", async (name) => {
    const { disks, mounts } = await fixture(name);
    const { runner, calls } = scriptedRunner(disks, mounts);
    const err = await prepareKubeletDataDevice({ host, runner, log: silent }, size).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DataDeviceError);
    expect((err as DataDeviceError).kind).toBe("not-found");
    expect((err as DataDeviceError).message).toBe("No kubelet data device found");
    expect(calls).toEqual(enumeration);
  });

  test("refuses a size of 0 bytes, which would match empty devices like zram0, before running anything", async () => {
    const { runner, calls } = scriptedRunner('NAME="zram0" PARTTYPE="" FSTYPE="" SIZE="0" PATH="/dev/zram0" TYPE="disk"\n', "");
    const err = await prepareKubeletDataDevice({ host, runner, log: silent }, 0).catch((e: unknown) => e);
    expect((err as DataDeviceError).kind).toBe("invalid-size");
    expect(calls).toEqual([]);
  });

  test("refuses to choose between several matching disks", async () => {
    const { disks, mounts } = await fixture("several");
    const { runner, calls } = scriptedRunner(disks, mounts);
    const err = await prepareKubeletDataDevice({ host, runner, log: silent }, size).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DataDeviceError);
    expect((err as DataDeviceError).kind).toBe("ambiguous");
    expect((err as DataDeviceError).message).toContain("nvme1n1, nvme2n1");
    expect(calls).toEqual(enumeration);
  });

  test("reports a failing mkfs.ext4 with its output and mounts nothing", async () => {
    const { disks, mounts } = await fixture("one-match");
    const { runner, calls } = scriptedRunner(disks, mounts, {
      "mkfs.ext4": { code: 1, stdout: "mke2fs 1.47.0\n", stderr: "/dev/sdb is apparently in use by the system\n" },
    });
    const err = await prepareKubeletDataDevice({ host, runner, log: silent }, size).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DataDeviceError);
    expect((err as DataDeviceError).kind).toBe("command-failed");
    expect((err as DataDeviceError).output).toBe("mke2fs 1.47.0\n/dev/sdb is apparently in use by the system");
    expect(calls.map((c) => c[0])).toEqual(["blkid", "lsblk", "lsblk", "mkfs.ext4"]);
  });

  test("unmounts the temporary mount when copying the old kubelet dir fails", async () => {
    const { disks, mounts } = await fixture("one-match");
    const { runner, calls } = scriptedRunner(disks, mounts, { cp: { code: 1, stdout: "", stderr: "cp: no space left" } });
    const err = await prepareKubeletDataDevice({ host, runner, log: silent }, size).catch((e: unknown) => e);
    expect((err as DataDeviceError).message).toContain("cp: no space left");
    expect(calls.slice(-2)).toEqual([
      ["cp", "-a", `${root}/var/lib/kubelet/.`, `${root}/tmp/varlibkubeletcp/`],
      ["umount", `${root}/tmp/varlibkubeletcp`],
    ]);
  });
});
