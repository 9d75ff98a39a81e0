import type { HostFs } from "../host/index.ts";
import type { Logger } from "../log/index.ts";
import { parseLsblkPairs } from "./lsblk.ts";
import type { LsblkRow } from "./lsblk.ts";
import { kubeletDir } from "./paths.ts";
import { formatArgv } from "./runner.ts";
import type { CommandRunner, RunResult } from "./runner.ts";

const kubeletDataVolumeLabel = "KUBEDEV";
/** Temporary mount used to copy the old kubelet dir onto the new filesystem (same path as upstream). */
const copyMountPoint = "/tmp/varlibkubeletcp";

/** The two enumerations of spec §6.3, verbatim: the `-d`/`-s` combination decides which devices appear. */
const lsblkDisksArgv = ["lsblk", "-dbsnP", "-o", "NAME,PARTTYPE,FSTYPE,SIZE,PATH,TYPE"] as const;
const lsblkMountsArgv = ["lsblk", "-dbsnP", "-o", "NAME,MOUNTPOINT,TYPE"] as const;

export type DataDeviceErrorKind = "invalid-size" | "not-found" | "ambiguous" | "command-failed";

/** Why the kubelet data device could not be prepared; `output` holds the failing command's output. */
export class DataDeviceError extends Error {
  override readonly name = "DataDeviceError";
  constructor(
    readonly kind: DataDeviceErrorKind,
    message: string,
    readonly output = "",
  ) {
    super(output === "" ? message : `${message}: ${output}`);
  }
}

export interface DataDeviceDeps {
  readonly host: HostFs;
  readonly runner: CommandRunner;
  readonly log: Logger;
}

/** What happened: an existing KUBEDEV filesystem was kept, or `device` was formatted and mounted. */
export type DataDeviceOutcome = { readonly action: "exists" } | { readonly action: "formatted"; readonly device: string };

/**
 * Disks that may become the kubelet data volume (spec §6.3 steps 2–4), in lsblk order.
 * `lsblk -ds` lists leaf devices only, so a partitioned disk never shows up as TYPE="disk".
 */
function selectCandidates(disks: readonly LsblkRow[], mounts: readonly LsblkRow[], sizeBytes: number): string[] {
  const size = String(sizeBytes);
  return disks
    .filter((d) => d["TYPE"] === "disk" && (d["PARTTYPE"] ?? "") === "" && (d["FSTYPE"] ?? "") === "" && d["SIZE"] === size)
    .map((d) => d["NAME"] ?? "")
    .filter((name) => name !== "")
    .filter(
      (name) =>
        // Upstream matches partitions by name prefix; kept as is (nvme0n1 also matches nvme0n10p1).
        !mounts.some((m) => (m["NAME"] ?? "").startsWith(name) && m["TYPE"] === "part" && (m["MOUNTPOINT"] ?? "").startsWith("/")),
    );
}

async function mustRun(runner: CommandRunner, argv: readonly string[], signal?: AbortSignal): Promise<RunResult> {
  const res = await runner.run(argv, signal);
  if (res.code !== 0) {
    throw new DataDeviceError("command-failed", `${formatArgv(argv)} exited with code ${res.code}`, (res.stdout + res.stderr).trim());
  }
  return res;
}

/**
 * Formats and mounts the kubelet data volume, the TypeScript form of upstream's format script (§6.3).
 * Deviations, both stricter: several matching disks → error without formatting (upstream takes the
 * first one, which can wipe the wrong disk when two equal-sized blank disks are attached); a failing
 * mkfs/mount/cp/umount is an error (upstream's script ignores them and exits 0).
 */
export async function prepareKubeletDataDevice(deps: DataDeviceDeps, sizeBytes: number, signal?: AbortSignal): Promise<DataDeviceOutcome> {
  const { host, runner, log } = deps;
  // Stricter than upstream: size 0 would match empty devices such as zram0 (lsblk reports SIZE="0").
  if (!Number.isSafeInteger(sizeBytes) || sizeBytes <= 0) {
    throw new DataDeviceError("invalid-size", `invalid kubelet data volume size ${sizeBytes}, must be a positive byte count`);
  }
  const existing = await runner.run(["blkid", "--label", kubeletDataVolumeLabel], signal);
  if (existing.code === 0 && existing.stdout.trim() !== "") {
    log.info("Kubelet data volume already formatted", { label: kubeletDataVolumeLabel, device: existing.stdout.trim() });
    return { action: "exists" };
  }

  const disks = parseLsblkPairs((await mustRun(runner, lsblkDisksArgv, signal)).stdout);
  const mounts = parseLsblkPairs((await mustRun(runner, lsblkMountsArgv, signal)).stdout);
  const candidates = selectCandidates(disks, mounts, sizeBytes);
  const [device, ...others] = candidates;
  if (device === undefined) throw new DataDeviceError("not-found", "No kubelet data device found");
  if (others.length > 0) {
    throw new DataDeviceError(
      "ambiguous",
      `several kubelet data devices of ${sizeBytes} bytes found (${candidates.join(", ")}), refusing to choose one`,
    );
  }

  log.info("Formatting kubelet data volume", { device: `/dev/${device}`, sizeBytes });
  await mustRun(
    runner,
    [
      "mkfs.ext4",
      "-L",
      kubeletDataVolumeLabel,
      "-O",
      "quota",
      "-E",
      "lazy_itable_init=0,lazy_journal_init=0,quotatype=usrquota:grpquota:prjquota",
      `/dev/${device}`,
    ],
    signal,
  );

  await host.ensureDir(kubeletDir);
  await host.ensureDir(copyMountPoint);
  const tmpMount = host.resolve(copyMountPoint);
  const kubelet = host.resolve(kubeletDir);
  await mustRun(runner, ["mount", `LABEL=${kubeletDataVolumeLabel}`, tmpMount], signal);
  try {
    // `dir/.` copies hidden entries too and works for an empty dir (upstream's `dir/*` fails there, ignored).
    await mustRun(runner, ["cp", "-a", `${kubelet}/.`, `${tmpMount}/`], signal);
  } catch (err) {
    // Do not leave the new filesystem mounted in /tmp; the copy error is the one worth reporting.
    const res = await runner.run(["umount", tmpMount]);
    if (res.code !== 0) log.error("Failed unmounting temporary kubelet data mount", { path: copyMountPoint, output: res.stderr.trim() });
    throw err;
  }
  await mustRun(runner, ["umount", tmpMount], signal);
  await mustRun(runner, ["mount", `LABEL=${kubeletDataVolumeLabel}`, kubelet, "-o", "defaults,prjquota,errors=remount-ro"], signal);
  log.info("Kubelet data volume mounted", { device: `/dev/${device}`, path: kubeletDir });
  return { action: "formatted", device };
}
