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
//
// Job floors (issue 25, report only): `floor_job_apply_ms_p50_*` time bench/apply-job-floor.ts, the
// apply's whole job (the Secret's watch event over TLS, JSON, base64, YAML, content decode, the change
// decided, then the syscall floor's own file and D-Bus code in the form that was fastest there) with
// Bun's API and none of the agent's code, compiled by the same Bun and run like the agent: in a sandbox
// of its own (same simulator, credentials and systemd double), on the same schedule, timed from the Secret
// update to the last RestartUnit at the double, p50 of all samples as for the syscall floor. On the fresh
// ext4 it gets a new mount of its own, as the agent does. `floor_job_apply_peak_rss_mb_1000_files` is its
// VmHWM after the 1000-file schedule (the agent's peak's counterpart). It is built twice, with Bun's
// default JIT policy and with the agent's --compile-jit-policy=100 (lower peak, more CPU), and each key
// is the lower of the two (for the peak, the second so far: 2026-11-30, 1000 files on /tmp, 63.8 against
// 68.8 MB; for the time, the first: 50 files 26.4 against 29.7 ms). Where its time goes (event
// delivery, JSON, base64 + YAML, decide, writes, D-Bus to the last restart; p50s from its marks) is
// printed on stderr. BENCH_APPLY_WHERE=tmp or =fresh_ext4 runs only that half (the other's keys null);
// each half takes 7.5-8.5 min on this machine, the whole bench ~16.
// First figures (2026-11-30 02:24-02:54, two runs of each half, agent = main 52d9cd8, load 0.1-1.0),
// job floor against the syscall floor / agent against the job floor: 50 files on a fresh ext4 1.31, 1.10 /
// 1.88, 2.39; 1000 files on a fresh ext4 1.15, 1.23 / 1.59, 1.37; 50 files on /tmp 1.24, 1.71 / 1.51,
// 1.49; 1000 files on /tmp 0.99, 0.92 / 0.86, 1.00. 1000-file peak: job floor 64.4-65.0 MB (I/O floor's
// idle 41.7 in the last startup run: + 23), agent 85.9-88.0 MB. The job's own time above the syscall
// work (p50s): the event 1.5-1.8 ms after the update (50 files) / 5 ms (1000), JSON 0.1 / 0.2, base64 +
// YAML 0.7 / 10-11, decide 0.3 / 3-4.
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SystemdAction } from "../test/doubles/systemd/index.ts";
import { startSystemdDouble } from "../test/doubles/systemd/index.ts";
import { startSandbox } from "../test/harness/sandbox.ts";
import { type FloorImpl, floorImpls } from "./apply-floor.ts";
import { benchOscYaml } from "./bench-osc.ts";

const iterations = Number(process.env["BENCH_APPLY_ITERATIONS"] ?? 11);
/** BENCH_BINARY compares another build (e.g. an older commit's) without touching dist. */
const binary = process.env["BENCH_BINARY"];
const unitCount = 10;
/** Long enough for 5 QPS / burst 10 to refill completely. */
const restMs = 2_500;
const where = process.env["BENCH_APPLY_WHERE"] ?? "";
if (!["", "tmp", "fresh_ext4"].includes(where)) throw new Error("BENCH_APPLY_WHERE must be tmp or fresh_ext4 when set");

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

/**
 * The schedule every program is timed on after its first apply: `iterations` × (a pause, then two updates
 * back to back). A file system that had time to commit its journal creates files faster than one right
 * after 1000 renames, so the floors must not run on a busier schedule than the agent's figure.
 */
async function onSchedule<T>(sample: () => Promise<T>): Promise<{ rested: T[]; backToBack: T[] }> {
  const rested: T[] = [];
  const backToBack: T[] = [];
  for (let i = 0; i < iterations; i++) {
    await Bun.sleep(restMs); // a pause between updates, not a wait for a condition
    rested.push(await sample());
    backToBack.push(await sample());
  }
  return { rested, backToBack };
}

/** /proc/<pid>/status read once: its "… kB" lines by key, in MB. */
const procStatusMb = async (pid: number): Promise<(key: string) => number> => {
  const status = await Bun.file(`/proc/${pid}/status`).text();
  return (key) => Number(new RegExp(`^${key}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? NaN) / 1024;
};

/** `fn` on a new ext4, or undefined (and why on stderr) where none can be mounted. */
async function onFreshExt4<T>(what: string, fn: (dir: string) => Promise<T>): Promise<T | undefined> {
  const fs = await mountFreshExt4();
  if (typeof fs === "string") {
    console.error(`bench ${what} on a fresh ext4: skipped, ${fs}`);
    return undefined;
  }
  try {
    return await fn(fs.dir);
  } finally {
    await fs.release();
  }
}

interface Figures {
  readonly agent: Measured;
  readonly floor: number;
  readonly job: JobMeasured | undefined;
}

/** Agent and syscall floor on one new ext4 (the floor right after the agent), each job floor build on a new one of its own. */
async function measureOnFreshExt4(files: number): Promise<Figures | undefined> {
  const both = await onFreshExt4(`apply ${files} files`, async (dir) => {
    const agent = await measure(files, dir);
    return { agent, floor: await measureFloor(files, dir) };
  });
  if (both === undefined) return undefined;
  const builds: JobMeasured[] = [];
  for (const build of jobFloorBuilds) {
    const m = await onFreshExt4(`apply job floor ${files} files`, (dir) => measureJobFloor(files, both.floor.impl, build, dir));
    if (m !== undefined) builds.push(m);
  }
  return { agent: both.agent, floor: both.floor.p50, job: lowestOf(builds) };
}

async function measureOnTmp(files: number): Promise<Figures> {
  const agent = await measure(files);
  const floor = await measureFloor(files);
  const builds: JobMeasured[] = [];
  for (const build of jobFloorBuilds) builds.push(await measureJobFloor(files, floor.impl, build));
  return { agent, floor: floor.p50, job: lowestOf(builds) };
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
    let generation = 0;
    const { rested, backToBack } = await onSchedule(() => step(++generation));
    const samples = [...rested, ...backToBack];
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

/** The lowest of the three forms' medians (the floor must not be a slower way of making the same calls), and its form. */
async function measureFloor(files: number, rootParent = tmpdir()): Promise<{ p50: number; impl: FloorImpl }> {
  const p50s = new Map<FloorImpl, number>();
  for (const impl of floorImpls) p50s.set(impl, await measureFloorWith(impl, files, rootParent));
  console.error(`bench apply floor ${files} files: ${[...p50s].map(([impl, p50]) => `${impl} ${p50.toFixed(1)} ms`).join(", ")} (p50)`);
  const [impl, p50] = [...p50s].reduce((a, b) => (b[1] < a[1] ? b : a));
  return { p50, impl };
}

interface JobMeasured {
  readonly p50: number;
  readonly peakRssMb: number;
}

/** Each figure's lowest over the job floor's builds (a floor must not be a slower or larger way of doing the job). */
const lowestOf = (builds: readonly JobMeasured[]): JobMeasured | undefined =>
  builds.length === 0 ? undefined : { p50: Math.min(...builds.map((b) => b.p50)), peakRssMb: Math.min(...builds.map((b) => b.peakRssMb)) };

/** The job floor's phases of one apply (ms), from its marks and the bench's own times (see the header). */
const jobPhases = ["first chunk", "delivery", "json", "base64+yaml", "decide", "writes", "dbus"] as const;
type JobSplit = Record<(typeof jobPhases)[number], number>;

const splitOf = (marks: Record<string, number>, updateAt: number, lastRestartAt: number): JobSplit => {
  const at = (k: string): number => {
    const t = marks[k];
    if (t === undefined) throw new Error(`apply job floor: no mark "${k}"`);
    return t;
  };
  return {
    "first chunk": at("event") - updateAt,
    delivery: at("eventEnd") - updateAt,
    json: at("json") - at("eventEnd"),
    "base64+yaml": at("parsed") - at("json"),
    decide: at("decided") - at("parsed"),
    writes: at("written") - at("decided"),
    dbus: lastRestartAt - at("written"),
  };
};

/** Removals at the end of the run. */
const cleanups: (() => Promise<void>)[] = [];
/**
 * The job floor's two builds by the same Bun as the agent (`bun build --compile`): Bun's default JIT policy,
 * and the agent's --compile-jit-policy=100, which keeps the apply's code in the interpreter (the JIT's code
 * pages and heap untouched: lower peak RSS, more CPU). Each key takes the lower of the two.
 */
type JobFloorBuild = "default JIT" | "JIT policy 100";
const jobFloorBuilds: readonly JobFloorBuild[] = ["default JIT", "JIT policy 100"];
const jobFloorBinaries = new Map<JobFloorBuild, Promise<string>>();
const buildJobFloor = async (build: JobFloorBuild): Promise<string> => {
  const dir = await mkdtemp(join(tmpdir(), "gna-job-floor-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const out = join(dir, "apply-job-floor");
  // dbus-next's optional transports break compiled binaries when bundled (as in the Makefile's build).
  const cmd = ["build", "--compile", "--minify", "--sourcemap=none", "-e", "x11", "-e", "usocket"];
  if (build === "JIT policy 100") cmd.push("--compile-jit-policy=100");
  const proc = Bun.spawn([process.execPath, ...cmd, join(import.meta.dir, "apply-job-floor.ts"), "--outfile", out], {
    stdout: "ignore",
    stderr: "inherit",
  });
  if ((await proc.exited) !== 0) throw new Error(`building the apply job floor (${build}) failed`);
  return out;
};

/** One build of the job floor: its p50 over the agent's schedule and its VmHWM after it. */
async function measureJobFloor(files: number, impl: FloorImpl, build: JobFloorBuild, rootParent?: string): Promise<JobMeasured> {
  const binaryBuilt = jobFloorBinaries.get(build) ?? buildJobFloor(build);
  jobFloorBinaries.set(build, binaryBuilt);
  const jobFloor = await binaryBuilt;
  let lastRestartAt = 0;
  let restarts = 0;
  const sb = await startSandbox({
    nodeName: `job-floor-${files}`,
    systemd: {
      onAction: (a) => {
        if (a.action !== "Restart") return;
        lastRestartAt = performance.now();
        restarts += 1;
      },
    },
    ...(binary !== undefined ? { binary } : {}),
    ...(rootParent !== undefined ? { rootParent } : {}),
  });
  let generation = 0;
  sb.setOsc(benchOscYaml(files, generation, unitCount));
  const proc = Bun.spawn(
    [
      jobFloor,
      `--root=${sb.root}`,
      `--bus=${sb.systemd.address}`,
      `--kubeconfig=${sb.root}/var/lib/gardener-node-agent/credentials/kubeconfig`,
      `--secret=${sb.secretName}`,
      `--impl=${impl}`,
    ],
    { stdout: "pipe", stderr: "inherit", env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin" } },
  );
  const next = lineReader(proc.stdout);
  /** The marks of the apply `applied <generation> <marks>` reports. */
  const applied = async (want: number): Promise<Record<string, number>> => {
    const line = await next();
    const m = /^applied (\d+) (.*)$/.exec(line);
    if (m === null || Number(m[1]) !== want) throw new Error(`apply job floor: unexpected answer ${JSON.stringify(line.slice(0, 80))}`);
    return JSON.parse(m[2] ?? "") as Record<string, number>;
  };
  const sample = async (): Promise<{ ms: number; split: JobSplit }> => {
    const yaml = benchOscYaml(files, ++generation, unitCount);
    restarts = 0;
    const t0 = performance.now();
    sb.setOsc(yaml);
    const marks = await applied(generation);
    if (restarts !== unitCount) throw new Error(`apply job floor: expected ${unitCount} restarts, saw ${restarts}`);
    return { ms: lastRestartAt - t0, split: splitOf(marks, performance.timeOrigin + t0, performance.timeOrigin + lastRestartAt) };
  };
  try {
    await applied(0); // the first apply creates the files and unit files
    const firstRssMb = (await procStatusMb(proc.pid))("VmRSS");
    const { rested, backToBack } = await onSchedule(sample);
    const mb = await procStatusMb(proc.pid);
    const [hwm, anon, file] = [mb("VmHWM"), mb("RssAnon"), mb("RssFile")];
    const all = [...rested, ...backToBack];
    const fmt = (xs: { ms: number }[]) => xs.map((x) => x.ms.toFixed(1)).join(" ");
    const p50 = (xs: { ms: number }[]) => median(xs.map((x) => x.ms)).toFixed(1);
    const where = rootParent === undefined ? "" : " on a fresh ext4";
    console.error(
      `bench apply job floor (${build}, ${impl}) ${files} files${where}: samples ms back to back ${fmt(backToBack)} (p50 ${p50(backToBack)}); ` +
        `rested ${fmt(rested)} (p50 ${p50(rested)}); VmRSS after the first apply ${firstRssMb.toFixed(1)} MB; ` +
        `VmHWM ${hwm.toFixed(1)} MB; at the end RssAnon ${anon.toFixed(1)}, RssFile ${file.toFixed(1)} MB`,
    );
    const split = jobPhases.map((p) => `${p} ${median(all.map((x) => x.split[p])).toFixed(2)}`).join(", ");
    console.error(`bench apply job floor (${build}) ${files} files${where}: split ms (p50 of all samples): ${split}`);
    return { p50: median(all.map((x) => x.ms)), peakRssMb: hwm };
  } finally {
    proc.kill();
    await proc.exited;
    await sb.stop();
  }
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
    const { rested, backToBack } = await onSchedule(sample);
    const peakRssMb = (await procStatusMb(agent.proc.pid))("VmHWM");
    const fmt = (xs: number[]) => xs.map((s) => s.toFixed(1)).join(" ");
    const where = rootParent === undefined ? "" : " on a fresh ext4";
    console.error(`bench apply ${files} files${where}: samples ms back to back ${fmt(backToBack)}; rested ${fmt(rested)}`);
    return { p50: median(backToBack), p50Rested: median(rested), peakRssMb };
  } finally {
    await agent.stop();
    await sb.stop();
  }
}

try {
  const small = where === "fresh_ext4" ? undefined : await measureOnTmp(50);
  const large = where === "fresh_ext4" ? undefined : await measureOnTmp(1000);
  const smallFresh = where === "tmp" ? undefined : await measureOnFreshExt4(50);
  const largeFresh = where === "tmp" ? undefined : await measureOnFreshExt4(1000);
  const ms = (x: number | undefined) => (x === undefined ? null : Number(x.toFixed(1)));
  const ratio = (agent: number | undefined, floor: number | undefined) =>
    agent === undefined || floor === undefined ? null : Number((agent / floor).toFixed(2));
  console.log(
    JSON.stringify({
      apply_latency_ms_p50_50_files_10_units: ms(small?.agent.p50),
      apply_latency_ms_p50_1000_files: ms(large?.agent.p50),
      apply_latency_ms_p50_50_files_10_units_rested: ms(small?.agent.p50Rested),
      apply_latency_ms_p50_1000_files_rested: ms(large?.agent.p50Rested),
      apply_peak_rss_mb_1000_files: ms(large?.agent.peakRssMb),
      apply_latency_ms_p50_50_files_10_units_fresh_ext4: ms(smallFresh?.agent.p50),
      apply_latency_ms_p50_1000_files_fresh_ext4: ms(largeFresh?.agent.p50),
      apply_latency_ms_p50_50_files_10_units_rested_fresh_ext4: ms(smallFresh?.agent.p50Rested),
      apply_latency_ms_p50_1000_files_rested_fresh_ext4: ms(largeFresh?.agent.p50Rested),
      apply_peak_rss_mb_1000_files_fresh_ext4: ms(largeFresh?.agent.peakRssMb),
      floor_apply_ms_p50_50_files_10_units: ms(small?.floor),
      floor_apply_ms_p50_1000_files: ms(large?.floor),
      floor_apply_ms_p50_50_files_10_units_fresh_ext4: ms(smallFresh?.floor),
      floor_apply_ms_p50_1000_files_fresh_ext4: ms(largeFresh?.floor),
      floor_job_apply_ms_p50_50_files_10_units: ms(small?.job?.p50),
      floor_job_apply_ms_p50_1000_files: ms(large?.job?.p50),
      floor_job_apply_ms_p50_50_files_10_units_fresh_ext4: ms(smallFresh?.job?.p50),
      floor_job_apply_ms_p50_1000_files_fresh_ext4: ms(largeFresh?.job?.p50),
      floor_job_apply_peak_rss_mb_1000_files: ms(large?.job?.peakRssMb),
      floor_job_apply_peak_rss_mb_1000_files_fresh_ext4: ms(largeFresh?.job?.peakRssMb),
      ratio_apply_50_files_10_units: ratio(small?.agent.p50, small?.floor),
      ratio_apply_1000_files: ratio(large?.agent.p50, large?.floor),
      ratio_apply_50_files_10_units_rested: ratio(small?.agent.p50Rested, small?.floor),
      ratio_apply_1000_files_rested: ratio(large?.agent.p50Rested, large?.floor),
      ratio_apply_50_files_10_units_fresh_ext4: ratio(smallFresh?.agent.p50, smallFresh?.floor),
      ratio_apply_1000_files_fresh_ext4: ratio(largeFresh?.agent.p50, largeFresh?.floor),
      ratio_apply_50_files_10_units_rested_fresh_ext4: ratio(smallFresh?.agent.p50Rested, smallFresh?.floor),
      ratio_apply_1000_files_rested_fresh_ext4: ratio(largeFresh?.agent.p50Rested, largeFresh?.floor),
    }),
  );
} finally {
  for (const c of cleanups) await c();
}
