// big_osc: the compiled agent's memory for a big OSC (issue 27): 5,000 files of ~3 KB each, base64-encoded
// inline (osc.yaml ~20 MB, the Secret ~27 MB as JSON), 10 units. The agent's peak RSS (VmHWM of its
// /proc status, reset through clear_refs before each apply) for the first apply and for the re-apply
// in which every file changed, against its idle RSS (VmRSS once ready, before the OSC exists) in the
// same run. Target: peak ≤ idle + 4 × the OSC size; `*_osc_multiple` = (peak − idle) / OSC size.
// BENCH_BIG_OSC_TRACE=1 prints VmRSS every 20 ms with the agent's log on stderr (where memory goes);
// BENCH_BINARY measures another build (e.g. main's, for a same-minute A/B) without touching dist.
import { writeFile } from "node:fs/promises";
import { startSandbox } from "../test/harness/sandbox.ts";
import { bigOscYaml } from "../test/harness/big-osc.ts";

const files = Number(process.env["BENCH_BIG_OSC_FILES"] ?? 5_000);
const trace = process.env["BENCH_BIG_OSC_TRACE"] === "1";
const binary = process.env["BENCH_BINARY"];
const mib = (kb: number) => Number((kb / 1024).toFixed(1));

const statusKb = async (pid: number, key: string): Promise<number> => {
  const status = await Bun.file(`/proc/${pid}/status`).text();
  return Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
};

const sb = await startSandbox({
  nodeName: "bench-big-osc",
  extraConfig: { logLevel: trace ? "debug" : "info" },
  ...(binary !== undefined ? { binary } : {}),
});
const agent = sb.spawnAgent({});
const pid = agent.proc.pid;
let sampling = false;
const sampler = async () => {
  while (sampling) {
    console.error(`${new Date().toISOString()}\tRSS ${mib(await statusKb(pid, "VmRSS"))} MiB`);
    await Bun.sleep(20); // a sampling period, not a wait for a condition
  }
};

/** Peak RSS (KiB) of one apply of `yaml`, the peak reset before it. */
const applyPeak = async (yaml: string): Promise<{ peakKb: number; ms: number }> => {
  await writeFile(`/proc/${pid}/clear_refs`, "5");
  sampling = trace;
  const traced = sampler();
  const t0 = performance.now();
  await sb.waitForApplied(sb.setOsc(yaml), 300_000);
  const ms = performance.now() - t0;
  sampling = false;
  await traced;
  return { peakKb: await statusKb(pid, "VmHWM"), ms };
};

try {
  const ready = `http://127.0.0.1:${sb.healthPort}/readyz`;
  for (let i = 0; i < 600 && (await fetch(ready).catch(() => undefined))?.status !== 200; i++) await Bun.sleep(50);
  await Bun.sleep(2_000); // settle after start-up before reading the idle figure
  const idleKb = await statusKb(pid, "VmRSS");
  const first = bigOscYaml(files, 0);
  const oscMib = first.length / 1024 / 1024;
  const applied = await applyPeak(first);
  const reapplied = await applyPeak(bigOscYaml(files, 1));
  const written = await sb.listFiles("/etc/big-osc");
  if (written.length !== files) throw new Error(`expected ${files} files on the host, found ${written.length}`);
  const multiple = (peakKb: number) => Number(((peakKb - idleKb) / 1024 / oscMib).toFixed(2));
  console.error(
    `bench big osc: ${files} files, ${oscMib.toFixed(1)} MiB; idle ${mib(idleKb)} MiB; first apply ${mib(applied.peakKb)} MiB in ${applied.ms.toFixed(0)} ms; re-apply ${mib(reapplied.peakKb)} MiB in ${reapplied.ms.toFixed(0)} ms`,
  );
  console.log(
    JSON.stringify({
      big_osc_files: files,
      big_osc_size_mib: Number(oscMib.toFixed(1)),
      big_osc_idle_rss_mib: mib(idleKb),
      big_osc_first_apply_peak_rss_mib: mib(applied.peakKb),
      big_osc_reapply_peak_rss_mib: mib(reapplied.peakKb),
      big_osc_first_apply_osc_multiple: multiple(applied.peakKb),
      big_osc_reapply_osc_multiple: multiple(reapplied.peakKb),
      big_osc_target_osc_multiple: 4,
      big_osc_first_apply_ms: Math.round(applied.ms),
      big_osc_reapply_ms: Math.round(reapplied.ms),
    }),
  );
} finally {
  if (trace) console.error(agent.output());
  await agent.stop();
  await sb.stop();
}
