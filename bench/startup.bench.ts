/**
 * Footprint of the compiled agent against a hello-world floor built by the same Bun:
 * binary size, spawn → /readyz 200 (p50/p95 of 20 runs each) and idle RSS after BENCH_IDLE_SECONDS
 * (default 60) with the servers up; BENCH_RUNS and BENCH_BINARY override the run count and the
 * binary. The agent runs against the API-server simulator and the systemd double, so "ready"
 * includes identity, node discovery and cache sync (no Node registered yet, as at a first boot). The idle
 * agent runs as on a worker: its Node registered with kubelet's status, kubelet's healthz answering
 * and a `ctr` that reaches containerd (test/harness/node-standins.ts), so its idle time holds Lease
 * renewals and health checks; BENCH_IDLE_NO_NODE=1 idles it without them (the row before 2026-11-29
 * evening). idle_file_rss_mb is the executable's resident pages and libraries, idle_anon_rss_mb the
 * heap. Prints one JSON object as the last stdout line.
 *
 * A second floor, built in the same run, does the least I/O any node agent does: it serves HTTP, opens
 * one unix-socket connection to the systemd double, and fetches from the API-server simulator over TLS
 * with the simulator's CA every 10 s (as often as the agent renews its Lease); its /readyz answers 200
 * only after the first TLS fetch returned. Its keys:
 *   floor_io_startup_ms_p50/p95   spawn → /readyz 200 (so: after its first TLS round trip)
 *   floor_io_idle_rss_mb          VmRSS after the same idle time as the agent, side by side with it
 *   floor_io_idle_anon_rss_mb     ... of which heap (RssAnon)
 *   floor_io_idle_file_rss_mb     ... of which the executable's and libraries' pages (RssFile)
 * A third (on a Node only) does the agent's whole idle job with Bun's own API and none of the agent's code
 * (floorJobSource): floor_job_idle_rss_mb (and _anon_, _file_), what Bun needs for that job; the gap from
 * it to idle_rss_mb is the agent's own code and libraries.
 * The gap idle_rss_mb − floor_io_idle_rss_mb is what the agent's own work costs above what Bun needs
 * for the agent's minimum job. File-backed RSS depends on the page cache: the floors are just built and
 * wholly cached, and so is the agent after `make build` (the kernel then maps up to 64 KB around each
 * page touched); with BENCH_BINARY, warm its cache first (`cat binary >/dev/null`) for a fair A/B.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startApiServer } from "../test/doubles/apiserver/index.ts";
import { startSystemdDouble } from "../test/doubles/systemd/index.ts";
import { startNodeStandIns } from "../test/harness/node-standins.ts";
import { reservePort } from "../test/harness/ports.ts";
import { createHealthyNode } from "../test/harness/sandbox.ts";

const repo = new URL("..", import.meta.url).pathname;
/** BENCH_BINARY compares another build (e.g. one with different build flags). */
const agent = process.env["BENCH_BINARY"] ?? join(repo, "dist/gardener-node-agent");
const runs = Number(process.env["BENCH_RUNS"] ?? "20");
const idleSeconds = Number(process.env["BENCH_IDLE_SECONDS"] ?? "60");

const work = mkdtempSync(join(tmpdir(), "gna-bench-"));
const cleanup: (() => void | Promise<void>)[] = [() => rmSync(work, { recursive: true, force: true })];
const sim = await startApiServer();
const systemd = await startSystemdDouble();
cleanup.push(
  () => sim.stop(),
  () => systemd.stop(),
);
const agentEnv = {
  PATH: process.env["PATH"] ?? "",
  DBUS_SYSTEM_BUS_ADDRESS: systemd.address,
  GARDENER_NODE_AGENT_HOSTNAME: "bench-node",
};

/** The floor with the agent's minimum I/O (see the header); argv: port, URL, CA file, token, socket path. */
const floorIoSource = `import { connect } from "node:net";
const [port, url, caFile, token, socketPath] = process.argv.slice(2);
const ca = await Bun.file(caFile).text();
let ready = false;
Bun.serve({ hostname: "127.0.0.1", port: Number(port), fetch: () => new Response(ready ? "ok" : "not ready", { status: ready ? 200 : 503 }) });
const socket = connect(socketPath);
socket.on("error", () => {});
const get = async () => (await fetch(url, { headers: { authorization: \`Bearer \${token}\` }, tls: { ca } })).text();
await get();
ready = true;
setInterval(() => void get().catch(() => {}), 10_000);
`;

/**
 * The floor with the agent's whole idle job but none of its code (see the header); argv: port, API URL, CA
 * file, token, socket path, node name, kubelet healthz URL, PATH holding ctr. What every idle agent does on
 * a worker, each with Bun's own API: two streaming watches over TLS (its Node, its OSC Secret) whose events
 * are parsed as JSON; a Lease renewal (GET + PUT) every 10 s; every 30 s kubelet's healthz over HTTP and
 * `ctr version` run with its output piped; a unix-socket connection to the systemd bus; a YAML config and a
 * SHA-256 at start, a file written and renamed, a JSON log line on stderr per renewal.
 */
const floorJobSource = `import { connect } from "node:net";
import { rename, writeFile } from "node:fs/promises";
const [port, api, caFile, token, socketPath, nodeName, kubeletUrl, binDir] = process.argv.slice(2);
const ca = await Bun.file(caFile).text();
const headers = { authorization: \`Bearer \${token}\`, "content-type": "application/json" };
const config = Bun.YAML.parse("controllers: {operatingSystemConfig: {secretName: s}}\\nserver: {healthProbes: {port: 1}}\\n");
const digest = new Bun.CryptoHasher("sha256").update(JSON.stringify(config)).digest("hex");
await writeFile(\`/tmp/floor-job-\${port}.tmp\`, digest);
await rename(\`/tmp/floor-job-\${port}.tmp\`, \`/tmp/floor-job-\${port}\`);
let ready = false;
let lastEvent = "";
Bun.serve({ hostname: "127.0.0.1", port: Number(port), fetch: () => new Response(ready ? "ok" : "not ready", { status: ready ? 200 : 503 }) });
const socket = connect(socketPath);
socket.on("error", () => {});
const watch = async (path) => {
  const res = await fetch(api + path, { headers, tls: { ca } });
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const chunk of res.body) {
    buffered += decoder.decode(chunk, { stream: true });
    let nl;
    while ((nl = buffered.indexOf("\\n")) >= 0) {
      lastEvent = JSON.parse(buffered.slice(0, nl)).type;
      buffered = buffered.slice(nl + 1);
    }
  }
};
void watch(\`/api/v1/nodes?watch=1&fieldSelector=metadata.name%3D\${nodeName}\`).catch(() => {});
void watch("/api/v1/namespaces/kube-system/secrets?watch=1&fieldSelector=metadata.name%3Ds").catch(() => {});
const leaseUrl = \`\${api}/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/floor-job-\${port}\`;
const renew = async () => {
  const got = await fetch(leaseUrl, { headers, tls: { ca } });
  const now = new Date().toISOString().replace("Z", "000Z");
  if (got.status === 404) {
    await got.text();
    const lease = { apiVersion: "coordination.k8s.io/v1", kind: "Lease", metadata: { name: \`floor-job-\${port}\`, namespace: "kube-node-lease" }, spec: { holderIdentity: nodeName, leaseDurationSeconds: 40, renewTime: now } };
    await (await fetch(leaseUrl.replace(/\\/[^/]+$/, ""), { method: "POST", headers, tls: { ca }, body: JSON.stringify(lease) })).text();
  } else {
    const lease = await got.json();
    lease.spec.renewTime = now;
    await (await fetch(leaseUrl, { method: "PUT", headers, tls: { ca }, body: JSON.stringify(lease) })).text();
  }
  process.stderr.write(JSON.stringify({ level: "debug", ts: now, msg: "Renewed lease", lastEvent }) + "\\n");
};
const check = async () => {
  await (await fetch(kubeletUrl, { signal: AbortSignal.timeout(5000) })).text();
  const ctr = Bun.spawn([binDir + "/ctr", "version"], { stdout: "pipe", stderr: "pipe" });
  await new Response(ctr.stdout).text();
  await ctr.exited;
};
await renew();
await check();
ready = true;
setInterval(() => void renew().catch(() => {}), 10_000);
setInterval(() => void check().catch(() => {}), 30_000);
`;

const buildFloors = async (): Promise<{ floor: string; floorIo: string; floorJob: string }> => {
  const build = async (name: string, source: string): Promise<string> => {
    const src = join(work, `${name}.ts`);
    writeFileSync(src, source);
    const out = join(work, name);
    const proc = Bun.spawn([process.execPath, "build", "--compile", "--minify", "--sourcemap=none", src, "--outfile", out], {
      stdout: "ignore",
      stderr: "inherit",
    });
    if ((await proc.exited) !== 0) throw new Error(`building the ${name} binary failed`);
    return out;
  };
  return {
    floor: await build("floor", 'Bun.serve({ hostname: "127.0.0.1", port: Number(process.argv[2]), fetch: () => new Response("ok") });\n'),
    floorIo: await build("floor-io", floorIoSource),
    floorJob: await build("floor-job", floorJobSource),
  };
};

/** A root with a valid config whose health/metrics ports are free. */
const agentRoot = async (i: number): Promise<{ root: string; port: number }> => {
  const version = (await new Response(Bun.spawn([agent, "--version"]).stdout).text()).trim().split(" ")[1] ?? "";
  const root = join(work, `root-${i}`);
  mkdirSync(join(root, "var/lib/gardener-node-agent/credentials"), { recursive: true });
  writeFileSync(join(root, "var/lib/gardener-node-agent/credentials/kubeconfig"), sim.kubeconfig({ token: sim.adminToken }));
  writeFileSync(join(root, "var/lib/gardener-node-agent/machine-name"), "bench-machine\n");
  const port = reservePort();
  writeFileSync(
    join(root, `var/lib/gardener-node-agent/config-${version}.yaml`),
    `controllers: {operatingSystemConfig: {secretName: s, kubernetesVersion: v1.33.0}}\n` +
      `server: {healthProbes: {bindAddress: 127.0.0.1, port: ${port}}, metrics: {bindAddress: 127.0.0.1, port: ${reservePort()}}}\n`,
  );
  return { root, port };
};

const waitReady = async (url: string, proc: { exitCode: number | null }, timeoutMs = 10_000): Promise<void> => {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    try {
      if ((await fetch(url)).status === 200) return;
    } catch (err) {
      // Connection refused until the server listens.
      if (!(err instanceof Error)) throw err;
    }
    if (proc.exitCode !== null) throw new Error(`${url}: process exited with ${proc.exitCode}`);
    if (performance.now() > deadline) throw new Error(`${url}: not ready within ${timeoutMs} ms`);
    await Bun.sleep(1);
  }
};

type Launch = () => Promise<{ cmd: string[]; url: string; env?: Record<string, string> }>;

/** Spawn → first 200 from `url`, in ms. */
const timeToReady = async (launch: Launch): Promise<number> => {
  const { cmd, url, env } = await launch();
  const t0 = performance.now();
  const proc = Bun.spawn(cmd, { stdout: "ignore", stderr: "inherit", ...(env === undefined ? {} : { env }) });
  try {
    await waitReady(url, proc);
    return performance.now() - t0;
  } finally {
    proc.kill("SIGKILL");
    await proc.exited;
  }
};

const percentile = (xs: number[], p: number): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
};

const round = (x: number, digits = 1): number => Math.round(x * 10 ** digits) / 10 ** digits;

const statusKb = async (pid: number, key: string): Promise<number> => {
  const text = await Bun.file(`/proc/${pid}/status`).text();
  const m = new RegExp(`^${key}:\\s+(\\d+) kB$`, "m").exec(text);
  return m === null ? NaN : Number(m[1]);
};

const main = async () => {
  const { floor, floorIo, floorJob } = await buildFloors();
  const caFile = join(work, "ca.pem");
  writeFileSync(caFile, readFileSync(sim.caFile));
  const socketPath = systemd.address.replace(/^unix:path=/, "");
  let i = 0;
  const agentLaunch: Launch = async () => {
    const { root, port } = await agentRoot(i++);
    return { cmd: [agent, "--root", root, "--log-level=error"], url: `http://127.0.0.1:${port}/readyz`, env: agentEnv };
  };
  const floorLaunch: Launch = async () => {
    const port = reservePort();
    return { cmd: [floor, String(port)], url: `http://127.0.0.1:${port}/` };
  };
  const floorIoLaunch: Launch = async () => {
    const port = reservePort();
    return {
      cmd: [floorIo, String(port), `${sim.url}/api/v1/nodes?limit=1`, caFile, sim.adminToken, socketPath],
      url: `http://127.0.0.1:${port}/readyz`,
    };
  };
  // Interleaved, so all see the same machine load.
  const agentMs: number[] = [];
  const floorMs: number[] = [];
  const floorIoMs: number[] = [];
  await timeToReady(agentLaunch); // warm the page cache
  await timeToReady(floorLaunch);
  await timeToReady(floorIoLaunch);
  for (let n = 0; n < runs; n++) {
    agentMs.push(await timeToReady(agentLaunch));
    floorMs.push(await timeToReady(floorLaunch));
    floorIoMs.push(await timeToReady(floorIoLaunch));
  }

  // The idle agent runs as on a worker: kubelet has registered its Node (so the agent renews its
  // Lease and runs its health checks) and answers on healthz, and ctr reaches containerd.
  const onNode = process.env["BENCH_IDLE_NO_NODE"] !== "1";
  let idleEnv: Record<string, string> = agentEnv;
  let floorJobIdleLaunch: Awaited<ReturnType<Launch>> | undefined;
  if (onNode) {
    createHealthyNode(sim, agentEnv.GARDENER_NODE_AGENT_HOSTNAME);
    const standIns = await startNodeStandIns();
    cleanup.push(() => standIns.stop());
    idleEnv = {
      ...agentEnv,
      PATH: `${standIns.binDir}:${agentEnv.PATH}`,
      GARDENER_NODE_AGENT_KUBELET_HEALTHZ_URL: standIns.kubeletHealthUrl,
    };
    const port = reservePort();
    const node = agentEnv.GARDENER_NODE_AGENT_HOSTNAME;
    floorJobIdleLaunch = {
      cmd: [floorJob, String(port), sim.url, caFile, sim.adminToken, socketPath, node, standIns.kubeletHealthUrl, standIns.binDir],
      url: `http://127.0.0.1:${port}/readyz`,
    };
  }
  const { cmd, url } = await agentLaunch();
  const idle = Bun.spawn(cmd, { stdout: "ignore", stderr: "inherit", env: idleEnv });
  const floorIdleLaunch = await floorLaunch();
  const floorIdle = Bun.spawn(floorIdleLaunch.cmd, { stdout: "ignore", stderr: "ignore" });
  const floorIoIdleLaunch = await floorIoLaunch();
  const floorIoIdle = Bun.spawn(floorIoIdleLaunch.cmd, { stdout: "ignore", stderr: "ignore" });
  const floorJobIdle = floorJobIdleLaunch && Bun.spawn(floorJobIdleLaunch.cmd, { stdout: "ignore", stderr: "ignore" });
  cleanup.push(
    () => idle.kill("SIGKILL"),
    () => floorIdle.kill("SIGKILL"),
    () => floorIoIdle.kill("SIGKILL"),
    () => floorJobIdle?.kill("SIGKILL"),
  );
  await waitReady(url, idle);
  await waitReady(floorIdleLaunch.url, floorIdle);
  await waitReady(floorIoIdleLaunch.url, floorIoIdle);
  if (floorJobIdle && floorJobIdleLaunch) await waitReady(floorJobIdleLaunch.url, floorJobIdle);
  // Scrape once, as Prometheus would, so the metrics path is paged in.
  await fetch(url.replace("/readyz", "/healthz"));
  await Bun.sleep(idleSeconds * 1000);

  const figures = {
    binary_bytes: statSync(agent).size,
    floor_binary_bytes: statSync(floor).size,
    startup_to_ready_ms_p50: round(percentile(agentMs, 50)),
    startup_to_ready_ms_p95: round(percentile(agentMs, 95)),
    floor_startup_ms_p50: round(percentile(floorMs, 50)),
    floor_startup_ms_p95: round(percentile(floorMs, 95)),
    idle_rss_mb: round((await statusKb(idle.pid, "VmRSS")) / 1024),
    idle_anon_rss_mb: round((await statusKb(idle.pid, "RssAnon")) / 1024),
    idle_file_rss_mb: round((await statusKb(idle.pid, "RssFile")) / 1024),
    floor_idle_rss_mb: round((await statusKb(floorIdle.pid, "VmRSS")) / 1024),
    floor_io_startup_ms_p50: round(percentile(floorIoMs, 50)),
    floor_io_startup_ms_p95: round(percentile(floorIoMs, 95)),
    floor_io_idle_rss_mb: round((await statusKb(floorIoIdle.pid, "VmRSS")) / 1024),
    floor_io_idle_anon_rss_mb: round((await statusKb(floorIoIdle.pid, "RssAnon")) / 1024),
    floor_io_idle_file_rss_mb: round((await statusKb(floorIoIdle.pid, "RssFile")) / 1024),
    ...(floorJobIdle && {
      floor_job_idle_rss_mb: round((await statusKb(floorJobIdle.pid, "VmRSS")) / 1024),
      floor_job_idle_anon_rss_mb: round((await statusKb(floorJobIdle.pid, "RssAnon")) / 1024),
      floor_job_idle_file_rss_mb: round((await statusKb(floorJobIdle.pid, "RssFile")) / 1024),
    }),
    idle_seconds: idleSeconds,
    runs,
  };
  console.log(JSON.stringify(figures));
};

try {
  await main();
} finally {
  for (const c of cleanup.reverse()) await c();
}
