// Fleet: N compiled agents (default 200), each with its own --root, Node and systemd D-Bus double (its own
// dbus-daemon, as each node has its own systemd; BENCH_FLEET_SHARED_SYSTEMD=1: one double for all, where every
// agent also receives the others' job signals), against ONE API-server simulator, for a steady-state window
// (default 120 s) after every node applied the pool's OSC. Reports API requests per second, p99 server-side Lease renewal latency and
// the agents' mean resident memory.
import { startApiServer } from "../test/doubles/apiserver/index.ts";
import { sampleOsc } from "../test/demo/sample-osc.ts";
import { agentBinary, agentEnv, createAgentRoot } from "../test/harness/sandbox.ts";
import { startNodeStandIns } from "../test/harness/node-standins.ts";
import { reservePort } from "../test/harness/ports.ts";
import { rm } from "node:fs/promises";
import { startSystemdDoubles } from "./systemd-doubles.ts";

const agents = Number(process.env["BENCH_FLEET_AGENTS"] ?? 200);
const steadySeconds = Number(process.env["BENCH_FLEET_SECONDS"] ?? 120);
const secretName = "gardener-node-agent-fleet";

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

const sim = await startApiServer({ requestLogLimit: 10_000_000 });
const systemd = await startSystemdDoubles(agents, process.env["BENCH_FLEET_SHARED_SYSTEMD"] === "1");
const standIns = await startNodeStandIns();
const roots: string[] = [];
const procs: ReturnType<typeof Bun.spawn>[] = [];
try {
  const yaml = sampleOsc({ greeting: "fleet" });
  const checksum = new Bun.CryptoHasher("sha256").update(yaml).digest("hex");
  sim.store.create("secrets", {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: secretName, namespace: "kube-system", annotations: { "checksum/data-script": checksum } },
    data: { "osc.yaml": Buffer.from(yaml).toString("base64") },
  });

  for (let i = 0; i < agents; i++) {
    const nodeName = `fleet-${i}`;
    const root = await createAgentRoot({
      sim,
      binary: agentBinary,
      nodeName,
      machineName: `machine-${nodeName}`,
      secretName,
      healthPort: reservePort(),
      metricsPort: reservePort(),
      extraConfig: { logLevel: "error" },
    });
    roots.push(root);
    procs.push(
      Bun.spawn([agentBinary, "--config-dir=/var/lib/gardener-node-agent", `--root=${root}`], {
        env: agentEnv(systemd.address(i), nodeName, {}, standIns),
        stdout: Bun.file(`${root}.log`),
        stderr: Bun.file(`${root}.log`),
      }),
    );
  }

  const applied = () =>
    Array.from({ length: agents }, (_, i) => sim.store.get("nodes", "", `fleet-${i}`)).filter(
      (n) =>
        (n?.["metadata"] as { annotations?: Record<string, string> } | undefined)?.annotations?.["checksum/cloud-config-data"] === checksum,
    ).length;
  const deadline = Date.now() + 300_000;
  while (applied() < agents) {
    if (Date.now() > deadline) throw new Error(`only ${applied()} of ${agents} agents applied the OSC within 300 s`);
    const dead = procs.filter((p) => p.exitCode !== null).length;
    if (dead > 0) {
      const i = procs.findIndex((p) => p.exitCode !== null);
      const log = await Bun.file(`${roots[i]}.log`).text();
      throw new Error(`${dead} agents exited during start-up; fleet-${i}: ${log.trim().split("\n").slice(-3).join(" | ")}`);
    }
    await Bun.sleep(500);
  }

  const t0 = Date.now();
  const start = sim.requests.length;
  await Bun.sleep(steadySeconds * 1000);
  const window = sim.requests.slice(start).filter((r) => r.time >= t0);
  const elapsed = (Date.now() - t0) / 1000;
  const leaseWrites = window.filter((r) => r.resource === "leases" && (r.verb === "update" || r.verb === "create"));
  let rssKb = 0;
  for (const p of procs) {
    const status = await Bun.file(`/proc/${p.pid}/status`)
      .text()
      .catch(() => "");
    rssKb += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  }
  const kinds = new Map<string, number>();
  for (const r of window) {
    const k = `${r.verb} ${r.resource}${r.subresource === "" ? "" : `/${r.subresource}`}`;
    kinds.set(k, (kinds.get(k) ?? 0) + 1);
  }
  const breakdown = [...kinds]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k}=${n}`)
    .join(", ");
  console.error(`fleet: ${agents} agents, ${window.length} requests in ${elapsed.toFixed(1)} s, ${leaseWrites.length} lease writes`);
  console.log(
    JSON.stringify({
      fleet_agents: agents,
      fleet_systemd_buses: systemd.buses,
      fleet_seconds: Number(elapsed.toFixed(1)),
      fleet_api_requests_per_second: Number((window.length / elapsed).toFixed(2)),
      fleet_lease_renewals_per_second: Number((leaseWrites.length / elapsed).toFixed(2)),
      fleet_lease_renewal_latency_ms_p99: Number(
        percentile(
          leaseWrites.map((r) => r.durationMs),
          99,
        ).toFixed(2),
      ),
      fleet_agent_rss_mb_mean: Number((rssKb / 1024 / agents).toFixed(1)),
      fleet_request_breakdown: breakdown,
    }),
  );
} finally {
  for (const p of procs) p.kill("SIGKILL");
  await Promise.all(procs.map((p) => p.exited));
  await systemd.stop();
  await standIns.stop();
  await sim.stop();
  await Promise.all(roots.flatMap((r) => [rm(r, { recursive: true, force: true }), rm(`${r}.log`, { force: true })]));
}
