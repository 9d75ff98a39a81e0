// Idle and waiting agents' CPU, A/B (issue 25; a diagnosis, not part of `make bench`). IDLE_AGENTS agents of
// each binary (argv: one or more binaries, default dist/gardener-node-agent) run side by side against one
// API-server simulator and one systemd double, so every binary sees the same machine load. Measured from
// /proc/<pid>/stat (utime + stime) per binary:
// - idle: the fleet up to date (OSC v0 applied), IDLE_S seconds (default 30): ms CPU per agent per second;
// - Lease events (IDLE_LEASE_EVENTS=n, default 0 = skipped): every Node gets rollout-parallelism 1, the pool
//   Lease holds IDLE_LEASE_SLOTS (default 20) live slots of nodes that do not exist, and OSC v1 arrives: every
//   agent waits for a slot. Then the driver writes the Lease n times (IDLE_LEASE_RATE per second, default 20),
//   each write moving one slot applying ↔ verifying and renewing it, as a rollout's slot changes do; no write
//   frees a slot. Reported: ms CPU per agent per Lease event, beyond the same agents' waiting CPU over as long
//   just before.
// IDLE_TIMINGS: GARDENER_NODE_AGENT_TIMINGS for the agents (default "": production's timings; the fleet-rollout
// bench uses `healthyFor=5s,verifyPoll=500ms`). IDLE_PROFILE_DIR: each binary's first agent
// writes a CPU profile there (Bun's --cpu-prof; bench/profile-summary.ts counts its samples) when stopped.
import { readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { cpuSnapshot, type CpuSnapshot } from "./cpu-split.ts";
import { startApiServer } from "../test/doubles/apiserver/index.ts";
import { startSystemdDouble } from "../test/doubles/systemd/index.ts";
import { agentBinary, agentEnv, createAgentRoot } from "../test/harness/sandbox.ts";
import { startNodeStandIns } from "../test/harness/node-standins.ts";
import { demoOsc as osc } from "../test/harness/pool.ts";
import { putOscSecret } from "../test/harness/osc-secret.ts";
import { reservePort } from "../test/harness/ports.ts";

const binaries = process.argv.length > 2 ? process.argv.slice(2) : [agentBinary];
const perBinary = Number(process.env["IDLE_AGENTS"] ?? 8);
const idleS = Number(process.env["IDLE_S"] ?? 30);
const leaseEvents = Number(process.env["IDLE_LEASE_EVENTS"] ?? 0);
const leaseRate = Number(process.env["IDLE_LEASE_RATE"] ?? 20);
const leaseSlots = Number(process.env["IDLE_LEASE_SLOTS"] ?? 20);
const timings = process.env["IDLE_TIMINGS"] ?? "";
const profileDir = process.env["IDLE_PROFILE_DIR"];
const secretName = "gardener-node-agent-idle";
const poolLabel = "worker.gardener.cloud/gardener-node-agent-secret-name";
const slotPrefix = "slot.node-agent.gardener.cloud/";

const sim = await startApiServer();
const systemd = await startSystemdDouble();
const standIns = await startNodeStandIns();
interface Agent {
  readonly binary: string;
  readonly node: string;
  readonly root: string;
  readonly proc: ReturnType<typeof Bun.spawn>;
}
const agents: Agent[] = [];

const setOsc = (yaml: string) => putOscSecret(sim, secretName, yaml);
const nodeAnnotations = (n: string) =>
  (sim.store.get("nodes", "", n) as { metadata?: { annotations?: Record<string, string> } } | undefined)?.metadata?.annotations ?? {};
async function waitUntil(what: string, ok: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    const dead = agents.find((a) => a.proc.exitCode !== null);
    if (dead !== undefined) throw new Error(`${dead.node} exited: ${(await Bun.file(`${dead.root}.log`).text()).slice(-400)}`);
    await Bun.sleep(200); // a poll of the simulator's store
  }
}
/** ms CPU per agent per second (or per `per`) of each binary between two snapshots. */
const perAgent = (from: CpuSnapshot, to: CpuSnapshot, per: number) =>
  binaries.map((b) => {
    let ticks = 0;
    for (const a of agents.filter((x) => x.binary === b))
      ticks += (to.procs.get(a.proc.pid)?.ticks ?? 0) - (from.procs.get(a.proc.pid)?.ticks ?? 0);
    return (ticks * 10) / perBinary / per;
  });
const show = (xs: number[]) => xs.map((x, i) => `${binaries[i]} ${x.toFixed(3)}`).join(", ");
/** Each binary's agents' user and system ticks (utime, stime), summed. */
const sysTicks = () =>
  binaries.map((b) =>
    agents
      .filter((a) => a.binary === b)
      .reduce<readonly [number, number]>(
        ([user, sys], a) => {
          const text = readFileSync(`/proc/${a.proc.pid}/stat`, "utf8");
          const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
          return [user + Number(f[11]), sys + Number(f[12])] as const;
        },
        [0, 0] as readonly [number, number],
      ),
  );
const sysShare = (from: ReadonlyArray<readonly number[]>, to: ReadonlyArray<readonly number[]>) =>
  to
    .map((t, i) => {
      const [u0 = 0, s0 = 0] = from[i] ?? [];
      const [u1 = 0, s1 = 0] = t;
      return `${binaries[i]} user ${u1 - u0} sys ${s1 - s0} ticks`;
    })
    .join(", ");

try {
  const v0 = setOsc(osc("v0"));
  for (let i = 0; i < perBinary; i++)
    for (const [bi, binary] of binaries.entries()) {
      const node = `idle-${bi}-${String(i).padStart(3, "0")}`;
      const root = await createAgentRoot({
        sim,
        binary,
        nodeName: node,
        machineName: `machine-${node}`,
        secretName,
        healthPort: reservePort(),
        metricsPort: reservePort(),
        extraConfig: { logLevel: "error", controllers: { operatingSystemConfig: { secretName, kubernetesVersion: "1.33.0" } } },
      });
      sim.store.patch("nodes", "", node, "merge", { metadata: { labels: { [poolLabel]: secretName } } });
      const profile = profileDir !== undefined && i === 0 ? { BUN_OPTIONS: `--cpu-prof --cpu-prof-dir=${profileDir}/${bi}` } : {};
      const proc = Bun.spawn([binary, "--config-dir=/var/lib/gardener-node-agent", `--root=${root}`], {
        env: agentEnv(systemd.address, node, { ...(timings === "" ? {} : { GARDENER_NODE_AGENT_TIMINGS: timings }), ...profile }, standIns),
        stdout: Bun.file(`${root}.log`),
        stderr: Bun.file(`${root}.log`),
      });
      agents.push({ binary, node, root, proc });
    }
  await waitUntil("v0 on every Node", () => agents.every((a) => nodeAnnotations(a.node)["checksum/cloud-config-data"] === v0), 300_000);
  await Bun.sleep(10_000); // past the start's one-off work (first unit check, first health checks)
  const from = cpuSnapshot();
  const sys0 = sysTicks();
  await Bun.sleep(idleS * 1000);
  const to = cpuSnapshot();
  console.log(`idle: ${sysShare(sys0, sysTicks())}`);
  console.log(
    `idle ms CPU per agent per s (${((to.at - from.at) / 1000).toFixed(1)} s, timings "${timings}"): ${show(perAgent(from, to, (to.at - from.at) / 1000))}`,
  );

  if (leaseEvents > 0) {
    const now = () => new Date().toISOString();
    const slots: Record<string, string> = {};
    for (let g = 0; g < leaseSlots; g++)
      slots[`${slotPrefix}ghost-${String(g).padStart(3, "0")}`] = JSON.stringify({
        checksum: "0".repeat(64),
        since: now(),
        renewed: now(),
        state: "applying",
      });
    sim.store.create("leases", {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: secretName, namespace: "kube-system", annotations: slots },
      spec: {},
    });
    for (const a of agents)
      sim.store.patch("nodes", "", a.node, "merge", {
        metadata: { annotations: { "node-agent.gardener.cloud/rollout-parallelism": "1" } },
      });
    await Bun.sleep(2_000); // the Node watches deliver the annotation before the new version
    setOsc(osc("v1"));
    await Bun.sleep(15_000); // every agent's reconcile ends in a wait for a slot
    const waitSpan = leaseEvents / leaseRate;
    const w0 = cpuSnapshot();
    await Bun.sleep(waitSpan * 1000);
    const w1 = cpuSnapshot();
    const waiting = perAgent(w0, w1, (w1.at - w0.at) / 1000);
    console.log(`waiting ms CPU per agent per s (${((w1.at - w0.at) / 1000).toFixed(1)} s): ${show(waiting)}`);
    const e0 = cpuSnapshot();
    const es0 = sysTicks();
    // IDLE_PERF=file: `perf record` of every agent over the Lease events (a diagnosis of where their CPU goes).
    const perfOut = process.env["IDLE_PERF"];
    const perf =
      perfOut === undefined
        ? undefined
        : Bun.spawn(["perf", "record", "-F", "2000", "-g", "-o", perfOut, "-p", agents.map((a) => a.proc.pid).join(",")], {
            stdout: "ignore",
            stderr: "ignore",
          });
    for (let i = 0; i < leaseEvents; i++) {
      const lease = sim.store.get("leases", "kube-system", secretName) as { metadata: { annotations: Record<string, string> } };
      const key = `${slotPrefix}ghost-${String(i % leaseSlots).padStart(3, "0")}`;
      const slot = JSON.parse(lease.metadata.annotations[key] ?? "{}") as { state: string };
      const next = { ...slot, renewed: now(), state: slot.state === "applying" ? "verifying" : "applying" };
      sim.store.update("leases", {
        ...lease,
        metadata: { ...lease.metadata, annotations: { ...lease.metadata.annotations, [key]: JSON.stringify(next) } },
      });
      await Bun.sleep(1000 / leaseRate);
    }
    await Bun.sleep(2_000); // the last events' wakes (their pauses are ≤ 0.5 s at parallelism 1)
    const e1 = cpuSnapshot();
    perf?.kill("SIGINT");
    await perf?.exited;
    console.log(`Lease events: ${sysShare(es0, sysTicks())}`);
    const span = (e1.at - e0.at) / 1000;
    const during = perAgent(e0, e1, 1);
    const perEvent = during.map((ms, i) => (ms - (waiting[i] ?? 0) * span) / leaseEvents);
    console.log(
      `Lease events: ${leaseEvents} in ${span.toFixed(1)} s, ${sim.openWatches("leases")} Lease watches; ms CPU per agent per event: ${show(perEvent)}`,
    );
    const stillWaiting = agents.filter((a) => nodeAnnotations(a.node)["checksum/cloud-config-data"] === v0).length;
    console.log(`agents still on v0 (waiting): ${stillWaiting} of ${agents.length}`);
  }
} finally {
  for (const a of agents) a.proc.kill(profileDir !== undefined ? "SIGTERM" : "SIGKILL");
  await Promise.all(agents.map((a) => Promise.race([a.proc.exited, Bun.sleep(10_000)])));
  for (const a of agents) a.proc.kill("SIGKILL");
  await systemd.stop();
  await standIns.stop();
  await sim.stop();
  await Promise.all(agents.flatMap((a) => [rm(a.root, { recursive: true, force: true }), rm(`${a.root}.log`, { force: true })]));
}
