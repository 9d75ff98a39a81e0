// restart_to_lease_renewal_ms: the compiled agent is SIGKILLed in the middle of a 1000-file apply and
// started again at once; the figure is the time from the kill to the end of the restarted agent's first
// successful Lease write (create or update), read from the API-server simulator's request log. On a
// node, systemd starts the agent again after the unit's RestartSec=5 (src/bootstrap/unit.ts), which
// comes on top. "Middle": half of the previous apply's duration after the Secret update, checked to be
// before the Node carries the new checksum. A round without a Lease write within 60 s ends the run and
// counts in restart_lease_timeouts_60s.
import { startSandbox } from "../test/harness/sandbox.ts";
import { benchOscYaml } from "./bench-osc.ts";

const rounds = Number(process.env["BENCH_RESTART_ROUNDS"] ?? 5);
const binary = process.env["BENCH_BINARY"];
const files = 1000;
const unitCount = 10;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

const sb = await startSandbox({ nodeName: "bench-restart", ...(binary !== undefined ? { binary } : {}) });
const samples: number[] = [];
const killedAfterMs: number[] = [];
let timeouts = 0;
try {
  let agent = sb.spawnAgent();
  let generation = 0;
  await sb.waitForApplied(sb.setOsc(benchOscYaml(files, generation, unitCount)), 120_000);
  // One undisturbed apply tells how long an apply of this OSC takes on this machine.
  let t0 = performance.now();
  await sb.waitForApplied(sb.setOsc(benchOscYaml(files, ++generation, unitCount)), 120_000);
  const applyMs = performance.now() - t0;
  for (let round = 0; round < rounds; round++) {
    const checksum = sb.setOsc(benchOscYaml(files, ++generation, unitCount));
    t0 = performance.now();
    await Bun.sleep(applyMs / 2); // the kill point, not a wait for a condition
    const annotations = (sb.node()?.["metadata"] as { annotations?: Record<string, string> } | undefined)?.annotations;
    if (annotations?.["checksum/cloud-config-data"] === checksum) throw new Error(`round ${round}: the apply finished before the kill`);
    agent.proc.kill("SIGKILL");
    const killedAt = Date.now();
    killedAfterMs.push(performance.now() - t0);
    await agent.proc.exited;
    const from = sb.sim.requests.length;
    agent = sb.spawnAgent();
    const deadline = Date.now() + 60_000;
    let renewedAt: number | undefined;
    while (renewedAt === undefined && Date.now() <= deadline) {
      const write = sb.sim.requests
        .slice(from)
        .find((r) => r.resource === "leases" && (r.verb === "update" || r.verb === "create") && r.code < 300);
      if (write !== undefined) renewedAt = write.time + write.durationMs;
      else await Bun.sleep(5);
    }
    const sample = (renewedAt ?? Date.now()) - killedAt;
    samples.push(sample);
    if (sample > 10_000) {
      // Beyond the 10 s target: say what the restarted agent spent its API budget on meanwhile.
      const byKind = new Map<string, number>();
      for (const r of sb.sim.requests.slice(from)) byKind.set(`${r.verb} ${r.resource}`, (byKind.get(`${r.verb} ${r.resource}`) ?? 0) + 1);
      console.error(
        `bench restart: round ${round} took ${sample} ms${renewedAt === undefined ? " (no Lease write within 60 s)" : ""}; requests since the restart: ${[...byKind].map(([k, n]) => `${k}=${n}`).join(", ")}`,
      );
    }
    if (renewedAt === undefined) {
      timeouts += 1;
      break; // the agent is stuck behind something else; later rounds would measure the same backlog
    }
    // The restarted agent finishes the interrupted apply before the next round.
    await sb.waitForApplied(checksum, 120_000);
  }
  await agent.stop();
} finally {
  await sb.stop();
}
console.error(
  `bench restart: killed ${killedAfterMs.map((s) => s.toFixed(0)).join(" ")} ms into the apply; kill → first Lease write ${samples.map((s) => s.toFixed(0)).join(" ")} ms`,
);
console.log(
  JSON.stringify({
    restart_to_lease_renewal_ms: Number(median(samples).toFixed(0)),
    restart_to_lease_renewal_ms_max: Number(Math.max(...samples).toFixed(0)),
    restart_rounds: samples.length,
    restart_lease_timeouts_60s: timeouts,
  }),
);
