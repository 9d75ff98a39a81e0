// A/B of runtime settings (issue 25; not part of `make bench`): builds with other flags (e.g.
// --compile-exec-argv=--smol, --compile-jit-policy=N) and environments (MIMALLOC_*, BUN_JSC_*), one
// variant {name, binary, env} each. In AB_ROUNDS rounds (default 3) with the variants side by side, so
// all see the same machine load: AB_STARTS spawns → /readyz each (interleaved, one at a time), then
// idle RSS after AB_IDLE s (default 20), RSS AB_IDLE s after applying the demo OSC (what the fleet bench
// reads), and peak RSS (VmHWM) after two 1000-file applies. Prints one line per variant: medians and
// samples. AB_IDLE_ONLY=1 stops after the idle RSS. Usage: bun run bench/runtime-settings-ab.ts '[{"name":"base","binary":"dist/gardener-node-agent"},
// {"name":"purge0","binary":"dist/gardener-node-agent","env":{"MIMALLOC_PURGE_DELAY":"0"}}]'
import { startSandbox, type Sandbox } from "../test/harness/sandbox.ts";
import { sampleOsc } from "../test/demo/sample-osc.ts";
import { benchOscYaml } from "./bench-osc.ts";

interface Variant {
  readonly name: string;
  readonly binary: string;
  readonly env?: Record<string, string>;
}
const variants = JSON.parse(process.argv[2] ?? "[]") as Variant[];
const rounds = Number(process.env["AB_ROUNDS"] ?? 3);
const idleS = Number(process.env["AB_IDLE"] ?? 20);
const startsPerRound = Number(process.env["AB_STARTS"] ?? 4);
/** AB_IDLE_ONLY=1: start-up and idle RSS only (no applies), for a change that only moves the start. */
const idleOnly = process.env["AB_IDLE_ONLY"] === "1";

const statusKb = async (pid: number, key: string): Promise<number> => {
  const text = await Bun.file(`/proc/${pid}/status`).text();
  return Number(new RegExp(`^${key}:\\s+(\\d+) kB$`, "m").exec(text)?.[1] ?? NaN) / 1024;
};

const waitReady = async (port: number, proc: { exitCode: number | null }): Promise<void> => {
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200) return;
    } catch {
      // not listening yet
    }
    if (proc.exitCode !== null) throw new Error(`exited ${proc.exitCode}`);
    await Bun.sleep(1);
  }
};

type Row = Record<string, number[]>;
const results = new Map<string, Row>(variants.map((v) => [v.name, {}]));
const push = (v: string, k: string, x: number) => {
  const row = results.get(v) as Row;
  (row[k] ??= []).push(Number(x.toFixed(1)));
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

for (let r = 0; r < rounds; r++) {
  // Start-up: interleaved, one at a time.
  for (let s = 0; s < startsPerRound; s++) {
    for (const v of variants) {
      const sb = await startSandbox({ binary: v.binary, extraConfig: { logLevel: "error" } });
      const t0 = performance.now();
      const agent = sb.spawnAgent(v.env ?? {});
      await waitReady(sb.healthPort, agent.proc);
      push(v.name, "ready_ms", performance.now() - t0);
      await agent.stop("SIGKILL");
      await sb.stop();
    }
  }
  // RSS: all variants side by side.
  const boxes: { v: Variant; sb: Sandbox; agent: ReturnType<Sandbox["spawnAgent"]> }[] = [];
  for (const v of variants) {
    const sb = await startSandbox({ binary: v.binary, extraConfig: { logLevel: "error" } });
    const agent = sb.spawnAgent(v.env ?? {});
    await waitReady(sb.healthPort, agent.proc);
    await fetch(`http://127.0.0.1:${sb.healthPort}/healthz`);
    boxes.push({ v, sb, agent });
  }
  await Bun.sleep(idleS * 1000);
  for (const b of boxes) {
    push(b.v.name, "idle_rss", await statusKb(b.agent.proc.pid, "VmRSS"));
    push(b.v.name, "idle_anon", await statusKb(b.agent.proc.pid, "RssAnon"));
    push(b.v.name, "idle_file", await statusKb(b.agent.proc.pid, "RssFile"));
  }
  await Promise.all((idleOnly ? [] : boxes).map((b) => b.sb.waitForApplied(b.sb.setOsc(sampleOsc({ greeting: "ab" })), 120_000)));
  if (!idleOnly) await Bun.sleep(idleS * 1000);
  for (const b of idleOnly ? [] : boxes) {
    push(b.v.name, "after_apply_rss", await statusKb(b.agent.proc.pid, "VmRSS"));
    push(b.v.name, "after_apply_anon", await statusKb(b.agent.proc.pid, "RssAnon"));
    push(b.v.name, "after_apply_file", await statusKb(b.agent.proc.pid, "RssFile"));
  }
  for (const b of idleOnly ? [] : boxes) {
    for (const g of [1, 2]) await b.sb.waitForApplied(b.sb.setOsc(benchOscYaml(1000, g)), 120_000);
    push(b.v.name, "peak_1000", await statusKb(b.agent.proc.pid, "VmHWM"));
  }
  for (const b of boxes) {
    await b.agent.stop("SIGKILL");
    await b.sb.stop();
  }
  const load = (await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ");
  console.error(`round ${r + 1} done, load ${load}`);
}
for (const [name, row] of results) {
  console.log(
    `${name}: ${Object.entries(row)
      .map(([k, xs]) => `${k} p50 ${median(xs).toFixed(1)} [${xs.join(" ")}]`)
      .join("; ")}`,
  );
}
