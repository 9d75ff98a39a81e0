/**
 * Records bench/bytecode-order.txt, the profile `make build` lays the executable's bytecode out by
 * (--bytecode-order): the functions a start uses are stored together at the front, so a start reads
 * fewer pages of the executable. The run is the common one on a node: the agent starts against the
 * API-server simulator with its Node and OSC Secret present, applies the OSC, renews its Lease and is
 * scraped once. Re-record after large changes (`bun run bench/record-bytecode-order.ts` after
 * `make build`); a profile of an older build still applies, functions it does not know are placed
 * after the recorded ones.
 */
import { rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { sampleOsc } from "../test/demo/sample-osc.ts";
import { startSandbox } from "../test/harness/sandbox.ts";

const repo = new URL("..", import.meta.url).pathname;
const out = join(repo, "bench/bytecode-order.txt");
const recording = `${out}.tmp`;

const sandbox = await startSandbox({ extraConfig: { logLevel: "error" } });
try {
  const checksum = sandbox.setOsc(sampleOsc({ greeting: "bytecode-order" }));
  const agent = sandbox.spawnAgent({ BUN_BYTECODE_ORDER_OUT: recording });
  const fail = (what: string) => (err: unknown) => {
    throw new Error(`${what}: ${String(err)}; agent: ${agent.output().trim().split("\n").slice(-3).join(" | ")}`);
  };
  await sandbox.waitForApplied(checksum).catch(fail("OSC not applied"));
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
