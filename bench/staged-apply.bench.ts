// staged_apply (issue 23): from the gates opening to the checksum recorded on the Node, for an OSC of 50
// files of which two are 20 MB imageRef files (fresh images each iteration, so the agent's image cache
// never answers), pulled from Debian's docker-registry on 127.0.0.1 by the compiled agent. Same run:
// - `staged`: the version arrives while the Node is held; the agent stages it; the clock starts when the
//   hold annotation is removed (the gates open) and the apply only reads the stage.
// - `unstaged`: the version arrives with nothing holding it; the clock starts at the Secret update, so the
//   pull (staging, then the apply from it) happens after the gates opened, as every pull did before.
// Both start rested (the client rate limiter refilled). Each figure is the median of BENCH_STAGED_ITERATIONS (default 5) applies; the two alternate.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pushOciLayout } from "../oci/push-layout.ts";
import { createTransport } from "../src/registry/index.ts";
import { fakeElf, startRegistry, writeTestLayout } from "../test/doubles/registry/index.ts";
import { eventually } from "../test/harness/eventually.ts";
import { startSandbox } from "../test/harness/sandbox.ts";

const iterations = Number(process.env["BENCH_STAGED_ITERATIONS"] ?? 5);
const imageBytes = 20 * 1024 * 1024;
const inlineFiles = 48;
/** Lets the agent's client-side rate limiter (5 QPS / burst 10) refill before each timed apply. */
const restMs = 2_500;

const dir = mkdtempSync(join(tmpdir(), "gna-bench-staged-"));
const registry = await startRegistry();
const transport = createTransport({ plainHttpHosts: [registry.host] });
let seed = 100;

/** Two fresh images (new bytes, so new digests) for one apply. */
async function pushImages(tag: string): Promise<string[]> {
  const refs: string[] = [];
  for (const name of ["kubelet", "extension"]) {
    const data = fakeElf("amd64", imageBytes, seed++);
    const layout = writeTestLayout(join(dir, `${tag}-${name}`), [
      { architecture: "amd64", layers: [{ compression: "gzip", files: [{ path: name, data, mode: 0o755, mtime: 0 }] }] },
    ]);
    const ref = `${registry.host}/bench/${name}:${tag}`;
    await pushOciLayout(layout, ref, transport);
    rmSync(join(dir, `${tag}-${name}`), { recursive: true, force: true });
    refs.push(ref);
  }
  return refs;
}

function oscYaml(generation: string, images: readonly string[]): string {
  const lines = ["apiVersion: extensions.gardener.cloud/v1alpha1", "kind: OperatingSystemConfig", "spec:", "  files:"];
  for (let f = 0; f < inlineFiles; f++) {
    lines.push(
      `  - path: /etc/bench/file-${f}.conf`,
      "    permissions: 420",
      `    content: {inline: {data: "generation ${generation} file ${f}"}}`,
    );
  }
  images.forEach((image, i) => {
    const name = image.includes("/kubelet:") ? "kubelet" : "extension";
    lines.push(
      `  - path: /opt/bin/bench-${i}`,
      "    permissions: 493",
      `    content: {imageRef: {image: "${image}", filePathInImage: /${name}}}`,
    );
  });
  return `${lines.join("\n")}\n`;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
};

const sb = await startSandbox();
const agent = sb.spawnAgent({ GARDENER_NODE_AGENT_PLAIN_HTTP_REGISTRIES: registry.host });
const hold = (value: string | null) =>
  sb.sim.store.patch("nodes", "", sb.nodeName, "merge", { metadata: { annotations: { "node-agent.gardener.cloud/hold": value } } });
const stageRecord = (checksum: string) => Bun.file(join(sb.root, "var/lib/gardener-node-agent/staged/versions", `${checksum}.json`));
const staged: number[] = [];
const unstaged: number[] = [];
try {
  await sb.waitForApplied(sb.setOsc(oscYaml("0", await pushImages("g0"))), 120_000);
  for (let i = 1; i <= iterations; i++) {
    // Staged: held while the agent stages, then released.
    const heldImages = await pushImages(`s${i}`);
    hold("bench");
    const heldChecksum = sb.setOsc(oscYaml(`s${i}`, heldImages));
    await eventually(
      "the held version staged",
      async () => {
        const f = stageRecord(heldChecksum);
        return (await f.exists()) && ((await f.json()) as { state: string }).state === "staged";
      },
      { timeoutMs: 120_000, intervalMs: 20 },
    );
    await Bun.sleep(restMs);
    let start = performance.now();
    hold(null);
    await sb.waitForApplied(heldChecksum, 120_000);
    staged.push(performance.now() - start);

    // Not staged: nothing holds the version; its pull happens after the trigger.
    const images = await pushImages(`u${i}`);
    await Bun.sleep(restMs);
    start = performance.now();
    const checksum = sb.setOsc(oscYaml(`u${i}`, images));
    await sb.waitForApplied(checksum, 120_000);
    unstaged.push(performance.now() - start);
    console.error(`iteration ${i}: staged ${staged.at(-1)?.toFixed(0)} ms, not staged ${unstaged.at(-1)?.toFixed(0)} ms`);
  }
} finally {
  await agent.stop();
  await sb.stop();
  await registry.stop();
  rmSync(dir, { recursive: true, force: true });
}
console.log(
  JSON.stringify({
    staged_apply_gates_open_to_applied_ms_p50_staged: Math.round(median(staged)),
    staged_apply_gates_open_to_applied_ms_p50_unstaged: Math.round(median(unstaged)),
    staged_apply_iterations: iterations,
  }),
);
