// Where a machine's CPU goes during a benchmark (issue 25's fleet rollout): CPU seconds per process group from
// /proc/<pid>/stat (utime + stime) between two snapshots, the whole machine's busy time from /proc/stat, and the
// event-loop lag of this process (a timer's lateness). Linux only; elsewhere the snapshots are empty.
import { readdirSync, readFileSync } from "node:fs";

/** Clock ticks per second of /proc's times (USER_HZ: 100 on every Linux this runs on). */
const ticksPerSecond = 100;

interface ProcTimes {
  readonly comm: string;
  readonly ticks: number;
}

export interface CpuSnapshot {
  readonly at: number;
  readonly procs: ReadonlyMap<number, ProcTimes>;
  /** The machine's busy and total ticks over all cores (/proc/stat's first line). */
  readonly busy: number;
  readonly total: number;
}

const read = (path: string): string | undefined => {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined; // the process ended between the listing and the read
  }
};

export function cpuSnapshot(): CpuSnapshot {
  const procs = new Map<number, ProcTimes>();
  let names: string[] = [];
  try {
    names = readdirSync("/proc").filter((n) => /^[0-9]+$/.test(n));
  } catch {
    // no /proc: nothing to split
  }
  for (const name of names) {
    const text = read(`/proc/${name}/stat`);
    if (text === undefined) continue;
    // comm is in parentheses and may hold spaces: the fields after its closing parenthesis start with state (field 3)
    const close = text.lastIndexOf(")");
    const comm = text.slice(text.indexOf("(") + 1, close);
    const fields = text.slice(close + 2).split(" ");
    procs.set(Number(name), { comm, ticks: Number(fields[11]) + Number(fields[12]) });
  }
  const cpu = (read("/proc/stat") ?? "").split("\n")[0]?.split(/\s+/).slice(1).map(Number) ?? [];
  const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0);
  const total = cpu.reduce((a, b) => a + b, 0);
  return { at: Date.now(), procs, busy: total - idle, total };
}

/**
 * CPU seconds per group between two snapshots; `groupOf` names a process's group (by pid and comm). Processes
 * that started and ended in between are not seen: they are in `unseen` (machine busy − the groups).
 */
export function cpuSplit(
  from: CpuSnapshot,
  to: CpuSnapshot,
  groupOf: (pid: number, comm: string) => string,
): { readonly groups: Record<string, number>; readonly unseen: number; readonly busy: number; readonly seconds: number } {
  const groups: Record<string, number> = {};
  for (const [pid, p] of to.procs) {
    const before = from.procs.get(pid);
    const ticks = p.ticks - (before?.comm === p.comm ? before.ticks : 0);
    if (ticks <= 0) continue;
    const g = groupOf(pid, p.comm);
    groups[g] = (groups[g] ?? 0) + ticks / ticksPerSecond;
  }
  const busy = (to.busy - from.busy) / ticksPerSecond;
  const seen = Object.values(groups).reduce((a, b) => a + b, 0);
  return { groups, unseen: Math.max(0, busy - seen), busy, seconds: (to.at - from.at) / 1000 };
}

const quantiles = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => Math.round(s[Math.min(s.length - 1, Math.floor(s.length * q))] ?? 0);
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: Math.round(s.at(-1) ?? 0) };
};

const ownTicks = () => {
  const text = read("/proc/self/stat") ?? "";
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
};

/**
 * This process's event-loop lag (how late a 100 ms timer fires, ms) and its own CPU use per second (% of one
 * core: near 100 means its one JS thread is saturated), sampled until `stop`.
 */
export function loopProbe(): {
  stop(): { readonly lagMs: ReturnType<typeof quantiles>; readonly cpuPercent: ReturnType<typeof quantiles> };
} {
  const periodMs = 100;
  const lags: number[] = [];
  const cpu: number[] = [];
  let last = performance.now();
  let second = { at: last, ticks: ownTicks() };
  const timer = setInterval(() => {
    const now = performance.now();
    lags.push(Math.max(0, now - last - periodMs));
    last = now;
    if (now - second.at < 1000) return;
    const ticks = ownTicks();
    cpu.push(((ticks - second.ticks) / ticksPerSecond / ((now - second.at) / 1000)) * 100);
    second = { at: now, ticks };
  }, periodMs);
  return {
    stop() {
      clearInterval(timer);
      return { lagMs: quantiles(lags), cpuPercent: quantiles(cpu) };
    },
  };
}
