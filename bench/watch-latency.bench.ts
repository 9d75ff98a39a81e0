/**
 * Watch event → reconcile start latency on loopback against the API server simulator (in this
 * process, over HTTPS through its TLS front). Each round patches a Secret in the simulator's store
 * (which writes the watch event at once) and measures until the controller's reconcile starts.
 * Prints a human summary, then ONE JSON line (the last stdout line) for bench/run.ts.
 */
import { realClock } from "../src/clock/index.ts";
import type { Logger } from "../src/log/types.ts";
import { Controller, enqueueObject, InformerSet, KubeClient, secrets, type KubeObject } from "../src/kube/index.ts";
import { startApiServer } from "../test/doubles/apiserver/index.ts";

const WARMUP = 30;
const ROUNDS = 500;

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };

function percentile(sorted: readonly number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] ?? Number.NaN;
}

async function main(): Promise<void> {
  const sim = await startApiServer({ bookmarkIntervalMs: 0 });
  const stop = new AbortController();
  try {
    sim.store.create("secrets", { metadata: { name: "bench", namespace: "kube-system" }, data: { round: "" } });
    const kube = new KubeClient({
      config: { server: sim.url, caPem: sim.caPem, credentials: { kind: "token", token: sim.adminToken } },
      qps: 1000,
      burst: 1000,
    });
    const set = new InformerSet({ kube, clock: realClock, log: silent });
    const informer = set.informerFor<KubeObject>(secrets, "kube-system", { fieldSelector: "metadata.name=bench" });

    let expectRound = -1;
    let onStart: ((t: number) => void) | undefined;
    const controller = new Controller({
      name: "bench",
      clock: realClock,
      log: silent,
      reconcile: async (key) => {
        const t = performance.now();
        // Level-based: read the cached object the event put there and check it is the awaited round.
        const obj = informer.get(key);
        const data = obj?.["data"] as Record<string, string> | undefined;
        const round = Number(Buffer.from(data?.["round"] ?? "", "base64").toString() || "-1");
        if (round === expectRound) onStart?.(t);
        return {};
      },
    });
    controller.watch(informer, enqueueObject());
    set.start(stop.signal);
    const running = controller.start(stop.signal);
    await set.waitForSync(stop.signal);
    while (sim.openWatches() === 0) await Bun.sleep(1);

    const samples: number[] = [];
    for (let i = 0; i < WARMUP + ROUNDS; i++) {
      const started = new Promise<number>((resolve) => {
        onStart = resolve;
      });
      expectRound = i;
      const t0 = performance.now();
      sim.store.patch("secrets", "kube-system", "bench", "merge", { data: { round: Buffer.from(String(i)).toString("base64") } });
      const t1 = await started;
      if (i >= WARMUP) samples.push(t1 - t0);
    }
    stop.abort();
    await running;
    await set.stopped();
    kube.close();

    samples.sort((a, b) => a - b);
    const p50 = percentile(samples, 50);
    const p95 = percentile(samples, 95);
    const round3 = (n: number) => Math.round(n * 1000) / 1000;
    console.log(
      `watch event → reconcile start over ${samples.length} rounds: p50 ${p50.toFixed(3)} ms, p95 ${p95.toFixed(3)} ms, max ${(samples.at(-1) ?? 0).toFixed(3)} ms`,
    );
    console.log(JSON.stringify({ watch_to_reconcile_ms_p50: round3(p50), watch_to_reconcile_ms_p95: round3(p95) }));
  } finally {
    stop.abort();
    await sim.stop();
  }
}

await main();
