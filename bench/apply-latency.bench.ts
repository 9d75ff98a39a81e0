// apply_latency_ms: from a Secret update (osc.yaml changed) to the last restart job the compiled agent
// issues, for an OSC of 50 files / 10 units and one of 1000 files / 10 units; peak RSS of the agent
// during the 1000-file applies. Each iteration rewrites every file, so every unit restarts.
// Two samples per iteration: "rested" after a pause in which the agent's client-side rate limiter
// (client-go defaults, 5 QPS / burst 10, like upstream) refills, and "back to back" right after the
// previous apply, whose ~13 API calls (node patches, one event per restart) emptied it: then each of
// the 3 API calls before the apply waits ~200 ms for a token, whatever the apply itself costs.
//
// Two sets of figures. The plain keys put the agent's --root in the OS temp dir, as every other bench
// and test does; on this machine that is the root ext4, churned by every test run, where creating a
// file scans many recently freed inodes: most of a 1000-file apply is then the kernel creating files
// (the same write loop takes ~25 ms for 1000 files on a new file system, 500-750 ms there). The keys
// suffixed `_fresh_ext4` put --root on an ext4 just made with mkfs.ext4 (defaults, journal on) in a
// loop-mounted image, one per file count: what a new node's disk looks like, and a floor in which the
// agent's own time is not drowned by that noise. Mounting needs root and a loop device; without them
// the bench says why on stderr and emits null for those keys. The mount is always undone.
//
// Floors (issue 25): `floor_apply_ms_p50_*` time bench/apply-floor.ts, a process that makes only the
// file-system mutations and D-Bus calls strace showed for the agent's apply of the same OSC update (see
// its header for the list and why it is a floor), on the same file system (a root beside the agent's
// on /tmp, on the fresh ext4 the same mount right after the agent) against its own systemd double, timed
// the same way: from the trigger to the last RestartUnit arriving at the double, back to back. It runs
// with node:fs sync calls, with libc through bun:ffi and with the temps written in parallel; the key is
// the lowest median of the three.
// `ratio_apply_*` = the agent's back-to-back p50 / the floor (target ≤ 1.3); `_rested` the same for the
// rested p50 (no rate-limiter wait in it).
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SystemdAction } from "../test/doubles/systemd/index.ts";
import { startSystemdDouble } from "../test/doubles/systemd/index.ts";
import { startSandbox } from "../test/harness/sandbox.ts";
import { benchOscYaml } from "./bench-osc.ts";

const iterations = Number(process.env["BENCH_APPLY_ITERATIONS"] ?? 11);
/** BENCH_BINARY compares another build (e.g. an older commit's) without touching dist. */
const binary = process.env["BENCH_BINARY"];
const unitCount = 10;
/** Long enough for 5 QPS / burst 10 to refill completely. */
const restMs = 2_500;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
};

interface Measured {
  readonly p50: number;
  readonly p50Rested: number;
  readonly peakRssMb: number;
}

interface FreshExt4 {
  readonly dir: string;
  release(): Promise<void>;
}

const run = (cmd: string[]): { ok: boolean; why: string } => {
  const r = Bun.spawnSync(cmd, { stdout: "ignore", stderr: "pipe" });
  return { ok: r.exitCode === 0, why: `${cmd[0]} exited ${r.exitCode}: ${r.stderr.toString().trim().split("\n")[0] ?? ""}` };
};

/** A new ext4 in a loop-mounted image under the temp dir, or why there is none. */
async function mountFreshExt4(): Promise<FreshExt4 | string> {
  if (process.getuid?.() !== 0) return "not running as root (mounting a loop device needs it)";
  const base = await mkdtemp(join(tmpdir(), "gna-bench-ext4-"));
  const image = join(base, "disk.img");
  const dir = join(base, "mnt");
  await mkdir(dir);
  let mounted = false;
  const release = async () => {
    if (mounted) {
      // The agent is gone by now; a lazy unmount is the fallback should anything still hold the mount.
      if (!run(["umount", dir]).ok) run(["umount", "-l", dir]);
      mounted = false;
    }
    await rm(base, { recursive: true, force: true });
  };
  // Allocated up front (not sparse) and without discard, so the loop device does not allocate or punch
  // holes in the backing file during the measurement.
  const steps = [
    ["fallocate", "-l", "512M", image],
    ["mkfs.ext4", "-q", "-F", "-E", "nodiscard", image],
    ["mount", "-o", "loop", image, dir],
  ];
  for (const step of steps) {
    const r = run(step);
    if (!r.ok) {
      await release();
      return r.why;
    }
  }
  mounted = true;
  // A signal must not leave a loop mount behind.
  const onSignal = () => {
    if (mounted) run(["umount", "-l", dir]);
    process.exit(130);
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  return {
    dir,
    release: async () => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      await release();
    },
  };
}

async function measureOnFreshExt4(files: number): Promise<{ agent: Measured; floor: number } | undefined> {
  const fs = await mountFreshExt4();
  if (typeof fs === "string") {
    console.error(`bench apply ${files} files on a fresh ext4: skipped, ${fs}`);
    return undefined;
  }
  try {
    const agent = await measure(files, fs.dir);
    return { agent, floor: await measureFloor(files, fs.dir) };
  } finally {
    await fs.release();
  }
}

/** Lines of a child's stdout, one at a time. */
function lineReader(stream: ReadableStream<Uint8Array>): () => Promise<string> {
  const reader = stream.getReader();
  const dec = new TextDecoder();
  let buf = "";
  return async () => {
    for (;;) {
      const nl = buf.indexOf("\n");
      if (nl >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        return line;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error("apply floor: the floor process ended early");
      buf += dec.decode(value, { stream: true });
    }
  };
}

/** The p50 of the syscall floor (bench/apply-floor.ts) with one form of file calls, back to back. */
async function measureFloorWith(impl: "fs" | "ffi" | "parallel", files: number, rootParent: string): Promise<number> {
  let lastRestartAt = 0;
  let restarts = 0;
  const systemd = await startSystemdDouble({
    onAction: (a) => {
      if (a.action !== "Restart") return;
      lastRestartAt = performance.now();
      restarts += 1;
    },
  });
  const root = await mkdtemp(join(rootParent, "gna-floor-"));
  const proc = Bun.spawn(
    [
      process.execPath,
      "run",
      join(import.meta.dir, "apply-floor.ts"),
      `--root=${root}`,
      `--bus=${systemd.address}`,
      `--files=${files}`,
      `--units=${unitCount}`,
      `--impl=${impl}`,
    ],
    { stdin: "pipe", stdout: "pipe", stderr: "inherit" },
  );
  const next = lineReader(proc.stdout);
  const step = async (generation: number): Promise<number> => {
    restarts = 0;
    const t0 = performance.now();
    proc.stdin.write(`${generation}\n`);
    await proc.stdin.flush();
    if ((await next()) !== "done") throw new Error("apply floor: unexpected answer");
    if (restarts !== unitCount) throw new Error(`apply floor: expected ${unitCount} restarts, saw ${restarts}`);
    return lastRestartAt - t0;
  };
  try {
    if ((await next()) !== "ready") throw new Error("apply floor: not ready");
    await step(0); // creates the files, as the agent's first apply does
    // The agent's schedule (a pause, then two updates back to back): a file system that had time to
    // commit its journal creates files faster than one right after 1000 renames, so the floor must not
    // run on a busier schedule than the figure it is compared with.
    const samples: number[] = [];
    let generation = 0;
    for (let i = 0; i < iterations; i++) {
      await Bun.sleep(restMs); // a pause between updates, not a wait for a condition
      samples.push(await step(++generation), await step(++generation));
    }
    const where = rootParent === tmpdir() ? "" : " on a fresh ext4";
    console.error(`bench apply floor (${impl}) ${files} files${where}: samples ms ${samples.map((s) => s.toFixed(1)).join(" ")}`);
    return median(samples);
  } finally {
    proc.stdin.end();
    proc.kill();
    await proc.exited;
    await systemd.stop();
    await rm(root, { recursive: true, force: true });
  }
}

/** The lower of the two forms' medians: the floor must not be the slower way of making the same calls. */
async function measureFloor(files: number, rootParent = tmpdir()): Promise<number> {
  const viaFs = await measureFloorWith("fs", files, rootParent);
  const viaFfi = await measureFloorWith("ffi", files, rootParent);
  const parallel = await measureFloorWith("parallel", files, rootParent);
  console.error(
    `bench apply floor ${files} files: node:fs ${viaFs.toFixed(1)} ms, bun:ffi ${viaFfi.toFixed(1)} ms, parallel temps ${parallel.toFixed(1)} ms (p50)`,
  );
  return Math.min(viaFs, viaFfi, parallel);
}

async function measure(files: number, rootParent?: string): Promise<Measured> {
  let lastRestartAt = 0;
  const onAction = (a: SystemdAction) => {
    if (a.action === "Restart") lastRestartAt = performance.now();
  };
  const sb = await startSandbox({
    nodeName: `bench-${files}`,
    systemd: { onAction },
    ...(binary !== undefined ? { binary } : {}),
    ...(rootParent !== undefined ? { rootParent } : {}),
  });
  const agent = sb.spawnAgent({});
  let generation = 0;
  /** One update of every file; ms from the Secret update to the last restart job. */
  const sample = async (): Promise<number> => {
    const yaml = benchOscYaml(files, ++generation, unitCount);
    const restartsBefore = sb.systemd.actions.filter((a) => a.action === "Restart").length;
    const t0 = performance.now();
    const checksum = sb.setOsc(yaml);
    await sb.waitForApplied(checksum, 120_000);
    const restarts = sb.systemd.actions.filter((a) => a.action === "Restart").length - restartsBefore;
    if (restarts !== unitCount) throw new Error(`expected ${unitCount} restarts, saw ${restarts}`);
    return lastRestartAt - t0;
  };
  try {
    // Generation 0 is the first apply (it also restarts containerd); measure the updates after it.
    await sb.waitForApplied(sb.setOsc(benchOscYaml(files, 0, unitCount)), 120_000);
    const rested: number[] = [];
    const backToBack: number[] = [];
    for (let i = 0; i < iterations; i++) {
      await Bun.sleep(restMs); // a pause between updates, not a wait for a condition
      rested.push(await sample());
      backToBack.push(await sample());
    }
    const status = await Bun.file(`/proc/${agent.proc.pid}/status`).text();
    const hwmKb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? NaN);
    const fmt = (xs: number[]) => xs.map((s) => s.toFixed(1)).join(" ");
    const where = rootParent === undefined ? "" : " on a fresh ext4";
    console.error(`bench apply ${files} files${where}: samples ms back to back ${fmt(backToBack)}; rested ${fmt(rested)}`);
    return { p50: median(backToBack), p50Rested: median(rested), peakRssMb: hwmKb / 1024 };
  } finally {
    await agent.stop();
    await sb.stop();
  }
}

const small = await measure(50);
const smallFloor = await measureFloor(50);
const large = await measure(1000);
const largeFloor = await measureFloor(1000);
const smallFresh = await measureOnFreshExt4(50);
const largeFresh = await measureOnFreshExt4(1000);
const ms = (x: number | undefined) => (x === undefined ? null : Number(x.toFixed(1)));
const ratio = (agent: number | undefined, floor: number | undefined) =>
  agent === undefined || floor === undefined ? null : Number((agent / floor).toFixed(2));
console.log(
  JSON.stringify({
    apply_latency_ms_p50_50_files_10_units: Number(small.p50.toFixed(1)),
    apply_latency_ms_p50_1000_files: Number(large.p50.toFixed(1)),
    apply_latency_ms_p50_50_files_10_units_rested: Number(small.p50Rested.toFixed(1)),
    apply_latency_ms_p50_1000_files_rested: Number(large.p50Rested.toFixed(1)),
    apply_peak_rss_mb_1000_files: Number(large.peakRssMb.toFixed(1)),
    apply_latency_ms_p50_50_files_10_units_fresh_ext4: ms(smallFresh?.agent.p50),
    apply_latency_ms_p50_1000_files_fresh_ext4: ms(largeFresh?.agent.p50),
    apply_latency_ms_p50_50_files_10_units_rested_fresh_ext4: ms(smallFresh?.agent.p50Rested),
    apply_latency_ms_p50_1000_files_rested_fresh_ext4: ms(largeFresh?.agent.p50Rested),
    apply_peak_rss_mb_1000_files_fresh_ext4: ms(largeFresh?.agent.peakRssMb),
    floor_apply_ms_p50_50_files_10_units: ms(smallFloor),
    floor_apply_ms_p50_1000_files: ms(largeFloor),
    floor_apply_ms_p50_50_files_10_units_fresh_ext4: ms(smallFresh?.floor),
    floor_apply_ms_p50_1000_files_fresh_ext4: ms(largeFresh?.floor),
    ratio_apply_50_files_10_units: ratio(small.p50, smallFloor),
    ratio_apply_1000_files: ratio(large.p50, largeFloor),
    ratio_apply_50_files_10_units_rested: ratio(small.p50Rested, smallFloor),
    ratio_apply_1000_files_rested: ratio(large.p50Rested, largeFloor),
    ratio_apply_50_files_10_units_fresh_ext4: ratio(smallFresh?.agent.p50, smallFresh?.floor),
    ratio_apply_1000_files_fresh_ext4: ratio(largeFresh?.agent.p50, largeFresh?.floor),
    ratio_apply_50_files_10_units_rested_fresh_ext4: ratio(smallFresh?.agent.p50Rested, smallFresh?.floor),
    ratio_apply_1000_files_rested_fresh_ext4: ratio(largeFresh?.agent.p50Rested, largeFresh?.floor),
  }),
);
