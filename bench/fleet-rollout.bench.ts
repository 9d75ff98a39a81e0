// Fleet rollout (issue 25): N compiled agents (default 200) in ONE worker pool against one API-server
// simulator, each with its own systemd D-Bus double (its own dbus-daemon, as each node has its own systemd;
// BENCH_ROLLOUT_SHARED_SYSTEMD=1: one double for all, where every agent also receives every other agent's
// JobRemoved signals), `node-agent.gardener.cloud/rollout-parallelism: P` (default 20)
// on every Node, the health window shortened to W seconds (default 5) through the test timings
// (GARDENER_NODE_AGENT_TIMINGS, see `timings` below). Every node first applies OSC v0
// without the annotation (no slots), then the Nodes get the annotation and the Secret OSC v1. Measured
// from the Secret update:
// - rollout_seconds: until every Node has v1's `checksum/cloud-config-data`;
// - rollout_ideal_seconds: ⌈N/P⌉ × (apply + W), apply = the median time a node held its slot `applying`
//   (taken → turned `verifying`), both seen on the Lease; rollout_ratio = the two (target ≤ 1.2);
// - rollout_max_nodes_in_slots: the most `applying`/`verifying` slots on the Lease at any moment, from
//   every change of the Lease (target: never above P);
// - rollout_lease_409_per_slot_change: 409 answers to Lease writes per slot change (an entry added,
//   removed or changing state), and the raw counts (rollout_lease_409_taking: those of nodes holding no
//   slot then, i.e. takes that lost; rollout_lease_write_ms_p50: a Lease write's time in the simulator);
// - rollout_api_requests_per_second_peak: the busiest 1-second bin of API requests;
// - rollout_lease_max_bytes: the largest Lease object seen (JSON, target ≤ 64 KB);
// - rollout_lease_watch_events: the Lease watch streams open at each change of the pool's Lease, summed
//   (the events the simulator sent the agents; a done node that stops watching gets none);
// - where the time beyond the ideal goes: rollout_verify_seconds_p50 (slot `verifying` → released: the
//   window W plus waiting for the unit check and the agent's look) and rollout_handoff_seconds_p50 (the
//   k-th release → the (P+k)-th take: how long a freed slot stays free).
// Env knobs for a smaller run: BENCH_ROLLOUT_AGENTS, BENCH_ROLLOUT_PARALLELISM, BENCH_ROLLOUT_WINDOW_S;
// BENCH_ROLLOUT_STALL_S (300): fail when no node finished for that long. For a diagnosis:
// BENCH_ROLLOUT_LOG_LEVEL (error) sets the agents' log level, and BENCH_ROLLOUT_KEEP_DIR keeps their logs
// there with `lease.jsonl` (every Lease change and Lease request of the rollout, simulator times).
import { copyFile, mkdir, rm, writeFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { cpuSnapshot, cpuSplit, loopProbe } from "./cpu-split.ts";
import { startApiServer } from "../test/doubles/apiserver/index.ts";
import type { StoreEvent } from "../test/doubles/apiserver/store.ts";
import { agentBinary, agentEnv, createAgentRoot } from "../test/harness/sandbox.ts";
import { startNodeStandIns } from "../test/harness/node-standins.ts";
import { demoOsc as osc } from "../test/harness/pool.ts";
import { oscChecksum, putOscSecret } from "../test/harness/osc-secret.ts";
import { reservePort } from "../test/harness/ports.ts";
import { startSystemdDoubles } from "./systemd-doubles.ts";

const agents = Number(process.env["BENCH_ROLLOUT_AGENTS"] ?? 200);
const parallelism = Number(process.env["BENCH_ROLLOUT_PARALLELISM"] ?? 20);
/**
 * A verifying node also waits for a systemd unit check that ran after its change (README, chunked
 * rollouts): the agent runs one right after its apply, so the unit check keeps production's period
 * (controllers.systemdUnitCheck.syncPeriod, 1 min) and the ideal below is reachable.
 */
const windowS = Number(process.env["BENCH_ROLLOUT_WINDOW_S"] ?? 5);
const secretName = "gardener-node-agent-rollout";
/** No node finished for this long: the bench fails instead of waiting out its deadline. */
const stallMs = Number(process.env["BENCH_ROLLOUT_STALL_S"] ?? 300) * 1000;
/** BENCH_ROLLOUT_IDLE_S: first measure the CPU of the up-to-date fleet for this long (diagnosis). */
const idleS = Number(process.env["BENCH_ROLLOUT_IDLE_S"] ?? 0);
const logLevel = process.env["BENCH_ROLLOUT_LOG_LEVEL"] ?? "error";
const keepDir = process.env["BENCH_ROLLOUT_KEEP_DIR"];
/**
 * BENCH_ROLLOUT_PROFILE_AGENTS=k (with BENCH_ROLLOUT_KEEP_DIR): the first k agents write a CPU profile (Bun's
 * --cpu-prof, Chrome's JSON) there when the rollout is over (they are stopped with SIGTERM, the rest killed).
 * Count samples (bench/profile-summary.ts): the -md format's times add the idle gaps before a sample to it.
 */
const profiledAgents = keepDir === undefined ? 0 : Number(process.env["BENCH_ROLLOUT_PROFILE_AGENTS"] ?? 0);
/**
 * BENCH_ROLLOUT_AGENT_NICE=n: the agents run at `nice -n n` (diagnosis: does the simulator, sharing the cores
 * with every agent here but not on a real cluster, slow the rollout down when it waits for a core?).
 */
const agentNice = Number(process.env["BENCH_ROLLOUT_AGENT_NICE"] ?? 0);
/** BENCH_ROLLOUT_BINARY: another build of the agent (an A/B against main's binary). */
const binary = process.env["BENCH_ROLLOUT_BINARY"] ?? agentBinary;
const slotPrefix = "slot.node-agent.gardener.cloud/";
const poolLabel = "worker.gardener.cloud/gardener-node-agent-secret-name";
const parallelismAnnotation = "node-agent.gardener.cloud/rollout-parallelism";
/**
 * GARDENER_NODE_AGENT_TIMINGS (src/cli/timings.ts): only the health window and the verify poll are
 * shortened; renewals, staleness and the unit check's period keep production's values, so the Lease and
 * the Nodes see production's write rate.
 */
const timings = process.env["BENCH_ROLLOUT_TIMINGS"] ?? `healthyFor=${windowS}s,verifyPoll=500ms`;

const loadAvg = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join("/");

type Annotations = Record<string, string>;
const annotationsOf = (o: unknown): Annotations =>
  (o as { metadata?: { annotations?: Annotations } } | undefined)?.metadata?.annotations ?? {};
const slots = (o: unknown): Map<string, { checksum?: string; state?: string }> => {
  const out = new Map<string, { checksum?: string; state?: string }>();
  for (const [k, v] of Object.entries(annotationsOf(o))) {
    if (!k.startsWith(slotPrefix)) continue;
    try {
      out.set(k.slice(slotPrefix.length), JSON.parse(v) as { checksum?: string; state?: string });
    } catch {
      out.set(k.slice(slotPrefix.length), {});
    }
  }
  return out;
};
const active = (s: { state?: string }) => s.state === "applying" || s.state === "verifying";
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
};

const sim = await startApiServer({ requestLogLimit: 10_000_000 });
const systemd = await startSystemdDoubles(agents, process.env["BENCH_ROLLOUT_SHARED_SYSTEMD"] === "1");
const standIns = await startNodeStandIns();
const roots: string[] = [];
const procs: ReturnType<typeof Bun.spawn>[] = [];
const nodeNames = Array.from({ length: agents }, (_, i) => `rollout-${String(i).padStart(3, "0")}`);
const setOsc = (yaml: string) => putOscSecret(sim, secretName, yaml);
// Polled every 100 ms: the stored Nodes are read without a copy (copying 200 Nodes per poll took a core's
// fifth of the machine the agents share, issue 25).
const applied = (checksum: string) =>
  nodeNames.filter((n) => annotationsOf(sim.store.peek("nodes", "", n))["checksum/cloud-config-data"] === checksum).length;

async function waitAll(what: string, checksum: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let seen = 0;
  let progressAt = Date.now();
  for (let done = applied(checksum); done < agents; done = applied(checksum)) {
    if (Date.now() > deadline) throw new Error(`${what}: only ${done} of ${agents} nodes within ${timeoutMs / 1000} s`);
    // A rollout that stands still (at 200 agents the slot writes could exhaust their conflict retries) fails fast.
    if (done > seen) [seen, progressAt] = [done, Date.now()];
    if (Date.now() - progressAt > stallMs) throw new Error(`${what}: stuck at ${seen} of ${agents} nodes for ${stallMs / 1000} s`);
    const i = procs.findIndex((p) => p.exitCode !== null);
    if (i >= 0) {
      const log = await Bun.file(`${roots[i]}.log`).text();
      throw new Error(`${nodeNames[i]} exited: ${log.trim().split("\n").slice(-3).join(" | ")}`);
    }
    await Bun.sleep(100); // a poll of the simulator's store, not a wait for time to pass
  }
}

try {
  const v0 = setOsc(osc("v0"));
  for (const nodeName of nodeNames) {
    const root = await createAgentRoot({
      sim,
      binary,
      nodeName,
      machineName: `machine-${nodeName}`,
      secretName,
      healthPort: reservePort(),
      metricsPort: reservePort(),
      extraConfig: {
        logLevel,
        controllers: { operatingSystemConfig: { secretName, kubernetesVersion: "1.33.0" } },
      },
    });
    sim.store.patch("nodes", "", nodeName, "merge", { metadata: { labels: { [poolLabel]: secretName } } });
    roots.push(root);
    procs.push(
      Bun.spawn(
        [
          ...(agentNice > 0 ? ["nice", "-n", String(agentNice)] : []),
          binary,
          "--config-dir=/var/lib/gardener-node-agent",
          `--root=${root}`,
        ],
        {
          env: agentEnv(
            systemd.address(procs.length),
            nodeName,
            {
              GARDENER_NODE_AGENT_TIMINGS: timings,
              ...(procs.length < profiledAgents ? { BUN_OPTIONS: `--cpu-prof --cpu-prof-dir=${keepDir}` } : {}),
            },
            standIns,
          ),
          stdout: Bun.file(`${root}.log`),
          stderr: Bun.file(`${root}.log`),
        },
      ),
    );
  }
  await waitAll("first apply (v0, no slots)", v0, 600_000);
  console.error(`fleet-rollout: ${agents} nodes applied v0`);
  for (const n of nodeNames)
    sim.store.patch("nodes", "", n, "merge", { metadata: { annotations: { [parallelismAnnotation]: String(parallelism) } } });
  await Bun.sleep(2_000); // let every agent's Node watch deliver the annotation before the new version
  if (idleS > 0) {
    // The CPU an up-to-date fleet spends with nothing to do (heartbeats, unit checks, health checks).
    const from = cpuSnapshot();
    await Bun.sleep(idleS * 1000);
    const agentPids = new Set(procs.map((p) => p.pid));
    const idle = cpuSplit(from, cpuSnapshot(), (pid) => (pid === process.pid ? "bench" : agentPids.has(pid) ? "agents" : "other"));
    const perAgentMs = ((idle.groups["agents"] ?? 0) / agents / idle.seconds) * 1000;
    console.error(
      `fleet-rollout: idle ${idle.seconds.toFixed(1)} s: busy ${idle.busy.toFixed(1)} CPU s, agents ${(idle.groups["agents"] ?? 0).toFixed(1)} ` +
        `(${perAgentMs.toFixed(1)} ms per agent per s), bench ${(idle.groups["bench"] ?? 0).toFixed(1)}, requests ${sim.requests.length}`,
    );
  }

  const v1yaml = osc("v1");
  const v1 = oscChecksum(v1yaml);
  let maxActive = 0;
  let maxLeaseBytes = 0;
  let slotChanges = 0;
  /** Lease watch streams open at each change of the pool's Lease, summed: the events the agents were sent. */
  let leaseEventsSent = 0;
  const appliedAt = new Map<string, number>();
  const verifyingAt = new Map<string, number>();
  const releasedAt = new Map<string, number>();
  /** (time, live slots) at every Lease change: the idle slot-seconds while nodes still waited. */
  const activeAt: [number, number][] = [];
  const recordedAt = new Map<string, number>();
  const timeline: string[] = [];
  const stop = sim.store.subscribe((e: StoreEvent) => {
    if (e.def.resource === "nodes") {
      const name = (e.object as { metadata?: { name?: string } }).metadata?.name ?? "";
      if (annotationsOf(e.object)["checksum/cloud-config-data"] === v1 && !recordedAt.has(name)) recordedAt.set(name, Date.now());
      return;
    }
    if (e.def.resource !== "leases" || (e.object as { metadata?: { name?: string } }).metadata?.name !== secretName) return;
    maxLeaseBytes = Math.max(maxLeaseBytes, JSON.stringify(e.object).length);
    leaseEventsSent += sim.openWatches("leases");
    if (keepDir !== undefined) timeline.push(JSON.stringify({ t: Date.now(), slots: [...slots(e.object)] }));
    const now = slots(e.object);
    const before = slots(e.prev);
    maxActive = Math.max(maxActive, [...now.values()].filter(active).length);
    activeAt.push([Date.now(), [...now.values()].filter(active).length]);
    for (const [n, s] of now) {
      const b = before.get(n);
      if (b?.state !== s.state || b?.checksum !== s.checksum) slotChanges += 1;
      if (s.checksum !== v1) continue;
      if (s.state === "applying" && !appliedAt.has(n)) appliedAt.set(n, Date.now());
      if (s.state === "verifying" && !verifyingAt.has(n)) verifyingAt.set(n, Date.now());
    }
    for (const n of before.keys()) {
      if (now.has(n)) continue;
      slotChanges += 1;
      if (before.get(n)?.checksum === v1 && !releasedAt.has(n)) releasedAt.set(n, Date.now());
    }
  });
  let storeEvents = 0;
  const countEvents = sim.store.subscribe(() => {
    storeEvents += 1;
  });
  const firstRequest = sim.requests.length;
  const cpuFrom = cpuSnapshot();
  const probe = loopProbe();
  const t0 = Date.now();
  setOsc(v1yaml);
  await waitAll("rollout of v1", v1, 1_800_000);
  const rolloutS = (Date.now() - t0) / 1000;
  const loop = probe.stop();
  const cpuTo = cpuSnapshot();
  stop();
  countEvents();
  // Where the machine's CPU went during the rollout (this process hosts the simulator with its TLS front, the
  // systemd doubles' Managers and the node stand-ins; the dbus-daemons are its children).
  const agentPids = new Set(procs.map((p) => p.pid));
  const split = cpuSplit(cpuFrom, cpuTo, (pid, comm) =>
    pid === process.pid ? "bench" : agentPids.has(pid) ? "agents" : comm === "dbus-daemon" ? "dbus-daemon" : `other:${comm}`,
  );
  const top = Object.entries(split.groups)
    .sort(([, a], [, b]) => b - a)
    .slice(0, 6)
    .map(([g, s]) => `${g} ${s.toFixed(1)}`);
  console.error(
    `fleet-rollout: CPU s over ${split.seconds.toFixed(1)} s (2 cores = ${(2 * split.seconds).toFixed(0)}): busy ${split.busy.toFixed(1)}, ` +
      `${top.join(", ")}, unseen ${split.unseen.toFixed(1)}; bench process CPU % per s p50/p90/max ` +
      `${loop.cpuPercent.p50}/${loop.cpuPercent.p90}/${loop.cpuPercent.max}, loop lag ms p50/p90/p99/max ` +
      `${loop.lagMs.p50}/${loop.lagMs.p90}/${loop.lagMs.p99}/${loop.lagMs.max}; ${storeEvents} store events, ${sim.openWatches()} open watches ` +
      `(${sim.openWatches("leases")} of the Lease), ${leaseEventsSent} Lease watch events sent`,
  );
  const byKind = new Map<string, number>();
  for (const r of sim.requests.slice(firstRequest)) {
    if (r.time < t0) continue;
    const who = /machine-/.test(r.user) ? "agent" : r.user || "anonymous";
    const key = `${who} ${r.verb}${r.watch ? "(watch)" : ""} ${r.resource}${r.subresource ? `/${r.subresource}` : ""}`;
    byKind.set(key, (byKind.get(key) ?? 0) + 1);
  }
  console.error(
    `fleet-rollout: requests by who × verb × resource: ${[...byKind]
      .sort(([, a], [, b]) => b - a)
      .map(([k, c]) => `${k} ${c}`)
      .join(", ")}`,
  );
  if (keepDir !== undefined) {
    await mkdir(keepDir, { recursive: true });
    const requests = sim.requests.slice(firstRequest).filter((r) => r.resource === "leases" || r.resource === "nodes");
    const lines = [
      ...timeline,
      ...requests.map((r) =>
        JSON.stringify({
          t: r.time,
          user: r.user,
          verb: r.verb,
          resource: r.resource,
          sub: r.subresource,
          name: r.name,
          code: r.code,
          ms: r.durationMs,
        }),
      ),
    ];
    await writeFile(`${keepDir}/lease.jsonl`, `${JSON.stringify({ t0, v1 })}\n${lines.join("\n")}\n`);
    await Promise.all(roots.map((r, i) => copyFile(`${r}.log`, `${keepDir}/${nodeNames[i]}.log`)));
  }

  const window = sim.requests.slice(firstRequest).filter((r) => r.time >= t0);
  const bins = new Map<number, number>();
  for (const r of window) bins.set(Math.floor((r.time - t0) / 1000), (bins.get(Math.floor((r.time - t0) / 1000)) ?? 0) + 1);
  const leaseWrites = window.filter(
    (r) => r.resource === "leases" && r.name === secretName && ["update", "patch", "create"].includes(r.verb),
  );
  const conflicts = leaseWrites.filter((r) => r.code === 409).length;
  // A 409 of a node that held no slot then was a take that lost; the others were a holder's own writes.
  const holding = (r: { user: string; time: number }) => {
    const n = r.user.replace(/^.*:machine-/, "");
    return (appliedAt.get(n) ?? Infinity) <= r.time && r.time <= (releasedAt.get(n) ?? Infinity);
  };
  const conflictsTaking = leaseWrites.filter((r) => r.code === 409 && !holding(r)).length;
  const applyS =
    median(
      [...verifyingAt].flatMap(([n, at]) => {
        const from = appliedAt.get(n);
        return from === undefined ? [] : [at - from];
      }),
    ) / 1000;
  const idealS = Math.ceil(agents / parallelism) * (applyS + windowS);
  const verifyS = median([...releasedAt].flatMap(([n, at]) => (verifyingAt.has(n) ? [at - (verifyingAt.get(n) ?? at)] : []))) / 1000;
  const takes = [...appliedAt.values()].sort((a, b) => a - b).slice(parallelism);
  const releases = [...releasedAt.values()].sort((a, b) => a - b);
  const handoffS = median(takes.map((at, k) => at - (releases[k] ?? at))) / 1000;
  // Where the time beyond the ideal goes: slots idle while nodes still waited (before the last take),
  // the first fill, the tail after the last take, and a release until the Node shows the checksum.
  const allTakes = [...appliedAt.values()].sort((a, b) => a - b);
  const lastTake = allTakes.at(-1) ?? t0;
  let idleSlotS = 0;
  for (let i = 0; i < activeAt.length; i++) {
    const [at, live] = activeAt[i] ?? [t0, 0];
    const until = Math.min(lastTake, activeAt[i + 1]?.[0] ?? lastTake);
    if (until > at) idleSlotS += ((parallelism - Math.min(parallelism, live)) * (until - at)) / 1000;
  }
  const firstFillS = ((allTakes[Math.min(parallelism, allTakes.length) - 1] ?? t0) - t0) / 1000;
  const firstTakeS = ((allTakes[0] ?? t0) - t0) / 1000;
  const tailS = (t0 + rolloutS * 1000 - lastTake) / 1000;
  // The time beyond the ideal, split exactly (slot-seconds / P, the last release as the end): P × T = the slots'
  // busy time + their idle time, and the ideal is every node applying for the median apply and verifying for W.
  const endAt = Math.max(t0, ...releases);
  const sumS = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / 1000 / parallelism;
  const beyond = {
    fill: sumS(allTakes.slice(0, parallelism).map((at) => at - t0)),
    handoffs: sumS(takes.map((at, k) => at - (releases[k] ?? at))),
    apply: sumS([...verifyingAt].map(([n, at]) => at - (appliedAt.get(n) ?? at) - applyS * 1000)),
    verify: sumS([...releasedAt].map(([n, at]) => at - (verifyingAt.get(n) ?? at) - windowS * 1000)),
    tail: sumS(releases.slice(Math.max(0, releases.length - parallelism)).map((at) => endAt - at)),
  };
  const recordS = median([...releasedAt].flatMap(([n, at]) => (recordedAt.has(n) ? [(recordedAt.get(n) ?? at) - at] : []))) / 1000;
  const conflictFailures = (
    await Promise.all(roots.map(async (r) => (await Bun.file(`${r}.log`).text()).split("kept changing under").length - 1))
  ).reduce((a, b) => a + b, 0);
  console.error(
    `fleet-rollout: ${agents} nodes (${systemd.buses} systemd buses), P=${parallelism}, W=${windowS}s: ${rolloutS.toFixed(1)} s (ideal ${idealS.toFixed(1)} s, apply p50 ${applyS.toFixed(2)} s), ` +
      `verify p50 ${verifyS.toFixed(2)} s, handoff p50 ${handoffS.toFixed(2)} s, first take ${firstTakeS.toFixed(2)} s, ` +
      `first fill ${firstFillS.toFixed(2)} s, idle ${idleSlotS.toFixed(1)} slot-s, tail ${tailS.toFixed(2)} s, record p50 ${recordS.toFixed(2)} s, ` +
      `${conflictFailures} conflict failures, load ${loadAvg()}, ` +
      `beyond the ideal (s, to the last release ${((endAt - t0) / 1000).toFixed(1)}): ${Object.entries(beyond)
        .map(([k, v]) => `${k} ${v.toFixed(2)}`)
        .join(", ")}, ` +
      `${leaseWrites.length} Lease writes, ${conflicts} conflicts, ${slotChanges} slot changes, max ${maxActive} in slots, Lease ≤ ${maxLeaseBytes} bytes`,
  );
  console.log(
    JSON.stringify({
      rollout_agents: agents,
      rollout_parallelism: parallelism,
      rollout_window_seconds: windowS,
      rollout_systemd_buses: systemd.buses,
      rollout_seconds: Number(rolloutS.toFixed(1)),
      rollout_apply_seconds_p50: Number(applyS.toFixed(2)),
      rollout_ideal_seconds: Number(idealS.toFixed(1)),
      rollout_ratio: Number((rolloutS / idealS).toFixed(2)),
      rollout_verify_seconds_p50: Number(verifyS.toFixed(2)),
      rollout_handoff_seconds_p50: Number(handoffS.toFixed(2)),
      rollout_first_take_seconds: Number(firstTakeS.toFixed(2)),
      rollout_first_fill_seconds: Number(firstFillS.toFixed(2)),
      rollout_idle_slot_seconds: Number(idleSlotS.toFixed(1)),
      rollout_tail_seconds: Number(tailS.toFixed(2)),
      rollout_record_seconds_p50: Number(recordS.toFixed(2)),
      rollout_conflict_failures: conflictFailures,
      rollout_max_nodes_in_slots: maxActive,
      rollout_lease_writes: leaseWrites.length,
      rollout_lease_409: conflicts,
      rollout_slot_changes: slotChanges,
      rollout_lease_409_per_slot_change: Number((conflicts / Math.max(1, slotChanges)).toFixed(2)),
      rollout_lease_409_taking: conflictsTaking,
      rollout_lease_write_ms_p50: median(leaseWrites.map((r) => r.durationMs)),
      rollout_api_requests_per_second_peak: Math.max(0, ...bins.values()),
      rollout_api_requests_per_second_mean: Number((window.length / rolloutS).toFixed(1)),
      rollout_lease_max_bytes: maxLeaseBytes,
      rollout_lease_watch_events: leaseEventsSent,
    }),
  );
} finally {
  // Profiled agents write their profile as they exit.
  for (const p of procs.slice(0, profiledAgents)) p.kill("SIGTERM");
  await Promise.all(procs.slice(0, profiledAgents).map((p) => Promise.race([p.exited, Bun.sleep(10_000)])));
  for (const p of procs) p.kill("SIGKILL");
  await Promise.all(procs.map((p) => p.exited));
  await systemd.stop();
  await standIns.stop();
  await sim.stop();
  await Promise.all(roots.flatMap((r) => [rm(r, { recursive: true, force: true }), rm(`${r}.log`, { force: true })]));
}
