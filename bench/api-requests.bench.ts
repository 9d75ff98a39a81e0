/**
 * API requests per node and hour in steady state, with the four CORE controllers (operatingsystemconfig,
 * lease, node, token) wired in-process the way src/cli/agent/start.ts wires them, against the API
 * server simulator, authenticated as a node agent (client certificate of
 * `gardener.cloud:node-agent:machine:<machine>`, so the simulator's node-agent authorizer applies).
 * After the initial sync (OSC applied, token written, Lease created) it counts the agent's requests
 * for BENCH_STEADY_SECONDS (default 300) and extrapolates to one hour; `open_watches` is the number
 * of watch streams open at the end. Prints a summary, then ONE JSON line (the last stdout line).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { realClock } from "../src/clock/index.ts";
import { createEventRecorder } from "../src/controllers/events.ts";
import { setupLeaseController } from "../src/controllers/lease/index.ts";
import { setupNodeController } from "../src/controllers/node/index.ts";
import { nodeSelectors } from "../src/controllers/shared/index.ts";
import { createReconciler as createOscReconciler, newOscController } from "../src/controllers/operatingsystemconfig/index.ts";
import { createTokenResync, setupTokenController } from "../src/controllers/token/index.ts";
import { createHostFs } from "../src/host/index.ts";
import { CachedReader, type Controller, InformerSet, isNotFound, KubeClient, nodes, secrets, type KubeObject } from "../src/kube/index.ts";
import type { Logger } from "../src/log/types.ts";
import { HealthChecks } from "../src/server/health.ts";
import { createMetricsRegistry } from "../src/server/metrics.ts";
import { startApiServer } from "../test/doubles/apiserver/index.ts";
import { FakeSystemd } from "../test/doubles/systemd/index.ts";

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };
const steadySeconds = Number(process.env["BENCH_STEADY_SECONDS"] ?? "300");
const b64 = (s: string) => Buffer.from(s).toString("base64");
const sha256 = (s: string) => new Bun.CryptoHasher("sha256").update(s).digest("hex");

async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

const oscYaml = stringify({
  apiVersion: "extensions.gardener.cloud/v1alpha1",
  kind: "OperatingSystemConfig",
  metadata: {},
  spec: {
    files: [{ path: "/etc/bench/file", permissions: 0o644, content: { inline: { encoding: "", data: "hello" } } }],
    units: [{ name: "bench.service", enable: true, command: "start", content: "[Service]\nExecStart=/bin/true\n" }],
  },
});

async function main(): Promise<void> {
  const sim = await startApiServer();
  const root = await mkdtemp(join(tmpdir(), "bench-api-requests-"));
  const stop = new AbortController();
  const runs: Promise<void>[] = [];
  let kube: KubeClient | undefined;
  try {
    const machine = "machine-bench";
    const hostName = "bench-host";
    const nodeName = "bench-node";
    const oscSecret = "gardener-node-agent-bench-0123456789abcdef";
    const tokenSecret = "gardener-valitail";
    sim.store.create("nodes", {
      apiVersion: "v1",
      kind: "Node",
      metadata: { name: nodeName, labels: { "kubernetes.io/hostname": hostName } },
    });
    sim.store.create("secrets", {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { namespace: "kube-system", name: oscSecret, annotations: { "checksum/data-script": sha256(oscYaml) } },
      data: { "osc.yaml": b64(oscYaml) },
    });
    sim.store.create("secrets", {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { namespace: "kube-system", name: tokenSecret },
      data: { token: b64("valitail-token") },
    });
    sim.setMachineNode(machine, nodeName);
    sim.allowSecret(machine, oscSecret);
    const user = `gardener.cloud:node-agent:machine:${machine}`;
    const cert = await sim.issueClientCert(user, ["gardener.cloud:node-agents"]);

    // What src/cli/agent/start.ts builds once per process.
    kube = new KubeClient({
      config: { server: sim.url, caPem: sim.caPem, clientCertPem: cert.certPem, clientKeyPem: cert.keyPem, credentials: { kind: "none" } },
    });
    const clock = realClock;
    const host = createHostFs(root);
    const systemd = new FakeSystemd();
    const node = { hostName, nodeName };
    const informers = new InformerSet({ kube, clock, log: silent });
    const events = createEventRecorder({ kube, clock, log: silent, component: "gardener-node-agent", host: hostName });
    const health = new HealthChecks();
    const metrics = createMetricsRegistry();
    const tokenResync = createTokenResync();
    const syncConfigs = [{ secretName: tokenSecret, path: "/var/lib/valitail/auth-token" }];

    // Order of §7.5: node, operatingsystemconfig, token, lease.
    const controllers: Controller[] = [];
    controllers.push(setupNodeController({ kube, informers, node, systemd, events, clock, log: silent }));
    const secretInformer = informers.informerFor<KubeObject>(secrets, "kube-system", { fieldSelector: `metadata.name=${oscSecret}` });
    informers.informerFor<KubeObject>(nodes, "", nodeSelectors(node));
    const cached = new CachedReader(informers);
    const oscDeps = {
      kube,
      readSecret: async (key: { namespace: string; name: string }) => {
        try {
          return await cached.get<KubeObject>(secrets, key.namespace, key.name);
        } catch (err) {
          if (isNotFound(err)) return undefined;
          throw err;
        }
      },
      host,
      systemd,
      clock,
      log: silent,
      events,
      node: { hostName, nodeName: nodeName as string | undefined },
      config: { secretName: oscSecret, kubernetesVersion: "1.33.0", syncPeriodMs: 10 * 60_000, tokenSyncConfigs: syncConfigs },
      processPath: "/usr/local/bin:/usr/bin:/bin",
      containerdInfo: { defaultConfig: async () => "", version: async () => "containerd github.com/containerd/containerd v1.7.22 abc" },
      probeFetch: async () => new Response("ok"),
      extractImageFile: async () => {
        throw new Error("no images in this bench");
      },
      arch: "amd64",
      onTokenResync: tokenResync.trigger,
    };
    controllers.push(
      newOscController({
        reconcile: createOscReconciler(oscDeps),
        source: secretInformer,
        kube,
        node: oscDeps.node,
        clock,
        log: silent,
        signal: stop.signal,
      }),
    );
    controllers.push(
      setupTokenController({
        kube,
        host,
        events,
        node,
        clock,
        log: silent,
        syncConfigs,
        syncPeriodMs: 12 * 3_600_000,
        resync: tokenResync,
      }),
    );
    const lease = setupLeaseController({ kube, informers, node, clock, log: silent, health, metrics });
    if (lease !== undefined) controllers.push(lease.controller);

    const started = Date.now();
    informers.start(stop.signal);
    await informers.waitForSync(stop.signal);
    for (const c of controllers) runs.push(c.start(stop.signal));

    const mine = () => sim.requests.filter((r) => r.user === user);
    await until(
      async () =>
        (sim.store.get("nodes", "", nodeName) as any)?.metadata?.annotations?.["checksum/cloud-config-data"] === sha256(oscYaml) &&
        (await host.readText("/var/lib/valitail/auth-token")) === "valitail-token" &&
        sim.store.get("leases", "kube-system", `gardener-node-agent-${nodeName}`) !== undefined,
      "the initial sync",
    );
    const initialSyncMs = Date.now() - started;
    const initialRequests = mine().length;
    const from = sim.requests.length;
    const t0 = Date.now();
    console.log(`initial sync took ${initialSyncMs} ms and ${initialRequests} requests; measuring ${steadySeconds} s of steady state`);
    await Bun.sleep(steadySeconds * 1000);
    const window = (Date.now() - t0) / 1000;
    const steady = sim.requests.slice(from).filter((r) => r.user === user);
    const openWatches = sim.openWatches();

    const byKind = new Map<string, number>();
    for (const r of steady) byKind.set(`${r.verb} ${r.resource}`, (byKind.get(`${r.verb} ${r.resource}`) ?? 0) + 1);
    const breakdown = [...byKind]
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `${k}=${n}`)
      .join(", ");
    const perHour = Math.round((steady.length * 3600) / window);
    const errors = steady.filter((r) => r.code >= 400).length;
    console.log(
      `steady state: ${steady.length} requests in ${window.toFixed(1)} s → ${perHour}/h (target ≤ 361); ${openWatches} open watches (target ≤ 3)`,
    );
    console.log(`by verb and resource: ${breakdown}`);
    console.log(
      JSON.stringify({
        api_requests_per_node_hour: perHour,
        open_watches: openWatches,
        steady_seconds: Math.round(window),
        steady_requests: steady.length,
        steady_error_responses: errors,
        lease_renewals_per_hour: Math.round(((byKind.get("update leases") ?? 0) * 3600) / window),
        initial_sync_ms: initialSyncMs,
        initial_sync_requests: initialRequests,
        steady_breakdown: breakdown,
      }),
    );
  } finally {
    stop.abort();
    await Promise.allSettled(runs);
    kube?.close();
    await sim.stop();
    await rm(root, { recursive: true, force: true });
  }
}

await main();
