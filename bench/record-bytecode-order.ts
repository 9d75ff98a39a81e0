/**
 * Records the profiles `make build` lays the executable's bytecode out by (--bytecode-order), so the
 * functions a run uses are stored together at the front and a start reads and maps fewer pages of
 * the executable. Two runs against the API-server simulator, each ended after its Lease renewal and
 * one /metrics scrape:
 *   bench/bytecode-order-start.txt  a start with no OSC Secret (what every start and an idle agent run)
 *   bench/bytecode-order.txt        a start that applies an OSC (what a node's first boot runs)
 * The build passes the start profile first, so an idle agent's bytecode is not interleaved with the
 * apply path's. Re-record after large changes (`bun run bench/record-bytecode-order.ts` after
 * `make build`); a profile of an older build still applies, functions it does not know are placed
 * after the recorded ones.
 */
import { rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { sampleOsc } from "../test/demo/sample-osc.ts";
import { startSandbox } from "../test/harness/sandbox.ts";

const repo = new URL("..", import.meta.url).pathname;

const record = async (out: string, applyOsc: boolean): Promise<void> => {
  const recording = `${out}.tmp`;
  const sandbox = await startSandbox({ extraConfig: { logLevel: "error" } });
  try {
    const checksum = applyOsc ? sandbox.setOsc(sampleOsc({ greeting: "bytecode-order" })) : undefined;
    const agent = sandbox.spawnAgent({ BUN_BYTECODE_ORDER_OUT: recording });
    const fail = (what: string) => (err: unknown) => {
      throw new Error(`${what}: ${String(err)}; agent: ${agent.output().trim().split("\n").slice(-3).join(" | ")}`);
    };
    if (checksum !== undefined) await sandbox.waitForApplied(checksum).catch(fail("OSC not applied"));
    await sandbox.sim
      .waitFor("leases", "kube-system", `gardener-node-agent-${sandbox.nodeName}`, (l) => l !== undefined, 30_000)
      .catch(fail("no Lease"));
    const metrics = await fetch(`http://127.0.0.1:${sandbox.metricsPort}/metrics`);
    if (metrics.status !== 200) throw new Error(`/metrics answered ${metrics.status}`);
    const code = await agent.stop("SIGTERM");
    if (code !== 0) throw new Error(`agent exited with ${code}: ${agent.output().trim().split("\n").slice(-3).join(" | ")}`);
    if (!(await Bun.file(recording).exists())) throw new Error("the agent wrote no bytecode order (built without --bytecode?)");
    await rename(recording, out);
    console.error(`wrote ${out}`);
  } finally {
    await rm(recording, { force: true });
    await sandbox.stop();
  }
};

await record(join(repo, "bench/bytecode-order-start.txt"), false);
await record(join(repo, "bench/bytecode-order.txt"), true);
