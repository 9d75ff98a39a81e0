// A/B of the 1000-file apply's memory (issue 25; not part of `make bench`): binaries side by side, in
// AB_ROUNDS rounds (default 3; the order reversed every other round, so both see the same machine load).
// Each variant gets a sandbox of its own: the first apply of the bench's 1000-file / 10-unit OSC, then
// AB_APPLIES updates (default 6; rested and back to back in turn, like apply-latency.bench.ts). The
// agent's /proc status is read every millisecond: peak RSS split into anonymous and file-backed (which
// VmHWM alone does not tell), the first apply's peak apart from the later ones', and per update the
// latency to the last RestartUnit and the agent's CPU (utime + stime). One line per run, then medians.
// Usage: bun run bench/apply-peak-ab.ts '[{"name":"main","binary":"/tmp/main-agent"},{"name":"new","binary":"dist/gardener-node-agent"}]'
// AB_FILES (default 1000) and AB_ROOT_PARENT (the --root's parent directory, default the OS temp dir).
// Run it under the measure lock like every bench.
import { readFileSync } from "node:fs";
import { startSandbox } from "../test/harness/sandbox.ts";
import { benchOscYaml } from "./bench-osc.ts";

interface Variant {
  readonly name: string;
  readonly binary: string;
}
const variants = JSON.parse(process.argv[2] ?? "[]") as Variant[];
const rounds = Number(process.env["AB_ROUNDS"] ?? 3);
const applies = Number(process.env["AB_APPLIES"] ?? 6);
const files = Number(process.env["AB_FILES"] ?? 1000);
const rootParent = process.env["AB_ROOT_PARENT"];
const restMs = 2_500;

const mb = (status: string, key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB$`, "m").exec(status)?.[1] ?? NaN) / 1024;
/** utime + stime in ms (clock ticks of 10 ms). */
const cpuMs = (pid: number) => {
  const fields = (readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1] ?? "").split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

interface Peak {
  rss: number;
  anon: number;
  file: number;
}
type Row = { hwm: number[]; anon: number[]; file: number[]; firstPeak: number[]; latency: number[]; cpu: number[] };
const rows = new Map<string, Row>(variants.map((v) => [v.name, { hwm: [], anon: [], file: [], firstPeak: [], latency: [], cpu: [] }]));

async function runOnce(v: Variant, round: number): Promise<void> {
  let lastRestartAt = 0;
  const sb = await startSandbox({
    nodeName: `peak-ab-${round}`,
    binary: v.binary,
    systemd: { onAction: (a) => void (a.action === "Restart" && (lastRestartAt = performance.now())) },
    ...(rootParent !== undefined ? { rootParent } : {}),
  });
  const agent = sb.spawnAgent({});
  const pid = agent.proc.pid;
  let peak: Peak = { rss: 0, anon: 0, file: 0 };
  const sampler = setInterval(() => {
    try {
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      const rss = mb(status, "VmRSS");
      if (rss > peak.rss) peak = { rss, anon: mb(status, "RssAnon"), file: mb(status, "RssFile") };
    } catch {
      // the agent is gone (its failure shows in waitForApplied)
    }
  }, 1);
  try {
    let generation = 0;
    await sb.waitForApplied(sb.setOsc(benchOscYaml(files, generation)), 120_000);
    const first = peak;
    const latency: number[] = [];
    const cpu: number[] = [];
    for (let i = 0; i < applies; i++) {
      if (i % 2 === 0) await Bun.sleep(restMs); // a pause between updates, not a wait for a condition
      const cpuBefore = cpuMs(pid);
      const t0 = performance.now();
      await sb.waitForApplied(sb.setOsc(benchOscYaml(files, ++generation)), 120_000);
      latency.push(lastRestartAt - t0);
      cpu.push(cpuMs(pid) - cpuBefore);
    }
    const hwm = mb(readFileSync(`/proc/${pid}/status`, "utf8"), "VmHWM");
    const row = rows.get(v.name) as Row;
    row.hwm.push(hwm);
    row.anon.push(peak.anon);
    row.file.push(peak.file);
    row.firstPeak.push(first.rss);
    row.latency.push(median(latency));
    row.cpu.push(median(cpu));
    console.log(
      `${v.name} round ${round}: VmHWM ${hwm.toFixed(1)} MB, peak RSS ${peak.rss.toFixed(1)} (anon ${peak.anon.toFixed(1)}, file ${peak.file.toFixed(1)}), first apply's ${first.rss.toFixed(1)} (anon ${first.anon.toFixed(1)}); latency p50 ${median(latency).toFixed(1)} ms [${latency.map((x) => x.toFixed(0)).join(" ")}], CPU p50 ${median(cpu)} ms; load ${load()}`,
    );
  } finally {
    clearInterval(sampler);
    await agent.stop();
    await sb.stop();
  }
}

for (let r = 0; r < rounds; r++) {
  for (const v of r % 2 === 0 ? variants : [...variants].reverse()) await runOnce(v, r);
}
for (const [name, row] of rows) {
  const m = (xs: number[]) => median(xs).toFixed(1);
  console.log(
    `${name} medians: VmHWM ${m(row.hwm)} MB (anon ${m(row.anon)}, file ${m(row.file)}), first apply ${m(row.firstPeak)}, latency ${m(row.latency)} ms, CPU ${m(row.cpu)} ms`,
  );
}
