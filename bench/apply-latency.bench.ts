// apply_latency_ms: from a Secret update (osc.yaml changed) to the last restart job the compiled agent
// issues, for an OSC of 50 files / 10 units and one of 1000 files / 10 units; peak RSS of the agent
// during the 1000-file applies. Each iteration rewrites every file, so every unit restarts.
// Two samples per iteration: "rested" after a pause in which the agent's client-side rate limiter
// (client-go defaults, 5 QPS / burst 10, like upstream) refills, and "back to back" right after the
// previous apply, whose ~13 API calls (node patches, one event per restart) emptied it: then each of
// the 3 API calls before the apply waits ~200 ms for a token, whatever the apply itself costs.
import type { SystemdAction } from "../test/doubles/systemd/index.ts";
import { startSandbox } from "../test/harness/sandbox.ts";

const iterations = Number(process.env["BENCH_APPLY_ITERATIONS"] ?? 11);
/** BENCH_BINARY compares another build (e.g. an older commit's) without touching dist. */
const binary = process.env["BENCH_BINARY"];
const unitCount = 10;
/** Long enough for 5 QPS / burst 10 to refill completely. */
const restMs = 2_500;

function oscYaml(files: number, generation: number): string {
  const lines = ["apiVersion: extensions.gardener.cloud/v1alpha1", "kind: OperatingSystemConfig", "spec:", "  units:"];
  for (let u = 0; u < unitCount; u++) {
    lines.push(`  - name: bench-${u}.service`, `    content: "[Service]\\nExecStart=/bin/true\\n"`, "    filePaths:");
    for (let f = u; f < files; f += unitCount) lines.push(`    - /etc/bench/${u}/file-${f}.conf`);
  }
  lines.push("  files:");
  for (let f = 0; f < files; f++) {
    lines.push(`  - path: /etc/bench/${f % unitCount}/file-${f}.conf`, "    permissions: 420", `    content: {inline: {data: "generation ${generation} file ${f}\\n"}}`);
  }
  return `${lines.join("\n")}\n`;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
};

interface Measured {
  readonly p50: number;
  readonly p50Rested: number;
  readonly peakRssMb: number;
}

async function measure(files: number): Promise<Measured> {
  let lastRestartAt = 0;
  const onAction = (a: SystemdAction) => {
    if (a.action === "Restart") lastRestartAt = performance.now();
  };
  const sb = await startSandbox({ nodeName: `bench-${files}`, systemd: { onAction }, ...(binary !== undefined ? { binary } : {}) });
  const agent = sb.spawnAgent({});
  let generation = 0;
  /** One update of every file; ms from the Secret update to the last restart job. */
  const sample = async (): Promise<number> => {
    const yaml = oscYaml(files, ++generation);
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
    await sb.waitForApplied(sb.setOsc(oscYaml(files, 0)), 120_000);
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
    console.error(`bench apply ${files} files: samples ms back to back ${fmt(backToBack)}; rested ${fmt(rested)}`);
    return { p50: median(backToBack), p50Rested: median(rested), peakRssMb: hwmKb / 1024 };
  } finally {
    await agent.stop();
    await sb.stop();
  }
}

const small = await measure(50);
const large = await measure(1000);
console.log(
  JSON.stringify({
    apply_latency_ms_p50_50_files_10_units: Number(small.p50.toFixed(1)),
    apply_latency_ms_p50_1000_files: Number(large.p50.toFixed(1)),
    apply_latency_ms_p50_50_files_10_units_rested: Number(small.p50Rested.toFixed(1)),
    apply_latency_ms_p50_1000_files_rested: Number(large.p50Rested.toFixed(1)),
    apply_peak_rss_mb_1000_files: Number(large.peakRssMb.toFixed(1)),
  }),
);
