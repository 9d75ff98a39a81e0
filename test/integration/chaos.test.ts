// Chaos (issue 10 "must show"): the compiled agent, kept running by a stand-in for systemd's
// Restart=always, takes 20 seeded random SIGKILLs while it applies a churning OSC (at a random
// systemd call, a few ms into the file writes, or while it waits), a 30 s API-server outage, and a
// restart of the system bus in the middle of an apply, the last two at the same time. After each
// phase it must converge: every file and unit as the OSC says, nothing of earlier applied generations left,
// the Node annotated with the checksum, and no temp file of an interrupted write anywhere.
// The agent's retry backoffs are capped at 2 s (GARDENER_NODE_AGENT_TIMINGS; production: the OSC
// controller's 1000 s, the informers' 30 s): an apply that failed through the outage is retried, and
// the caches reconnect, within seconds of its end instead of up to minutes later (measured: phase 2
// took 33-124 s with the production caps, depending on how many retries the outage had doubled).
import { afterEach, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { startSandbox, type AgentProcess, type Sandbox } from "../harness/sandbox.ts";
import { eventually, EventuallyTimeout } from "../harness/eventually.ts";

const SEED = 0x5eed_0010;
const KILLS = 20;
/** Kills before the outage, during it, after it. */
const PHASES = { before: 8, during: 5 } as const;
const OUTAGE_MS = 30_000;
/** systemd waits RestartSec=5 s; shorter here to keep the test short, longer after a failed start. */
const RESPAWN_MS = 100;
const RESPAWN_AFTER_FAILURE_MS = 2_000;
const AGENT_ENV = { GARDENER_NODE_AGENT_TIMINGS: "oscBackoffMax=2s,watchBackoffMax=2s" };

const FILES = 60;
const UNITS = 6;
const FILE_BYTES = 20 * 1024;

/** mulberry32: small, seeded, good enough to pick kill points. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Generation {
  readonly n: number;
  readonly yaml: string;
  readonly files: ReadonlyMap<string, { readonly content: string; readonly mode: number }>;
  readonly units: ReadonlyMap<string, { readonly content: string; readonly dropIn: string }>;
}

const filePath = (i: number) => `/etc/chaos/d${i % 6}/file-${String(i).padStart(3, "0")}.conf`;
const unitName = (i: number) => `chaos-${String(i).padStart(2, "0")}.service`;

function generation(n: number): Generation {
  const files = new Map<string, { content: string; mode: number }>();
  for (let i = 0; i < FILES; i++) {
    const line = `generation ${n} file ${i}\n`;
    files.set(filePath(i), { content: line.repeat(Math.ceil(FILE_BYTES / line.length)), mode: i % 2 === 0 ? 0o644 : 0o600 });
  }
  // One file per generation: the previous generation's marker must be removed.
  files.set(`/etc/chaos/markers/generation-${n}`, { content: `${n}\n`, mode: 0o644 });
  const units = new Map<string, { content: string; dropIn: string }>();
  for (let i = 0; i < UNITS; i++) {
    units.set(unitName(i), {
      content: `[Service]\nExecStart=/bin/true ${n}\n`,
      dropIn: `[Service]\nEnvironment=GENERATION=${n}\n`,
    });
  }
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  const yaml = `apiVersion: extensions.gardener.cloud/v1alpha1
kind: OperatingSystemConfig
spec:
  units:
${[...units].map(([name, u]) => `  - name: ${name}\n    content: ${JSON.stringify(u.content)}\n    dropIns:\n    - name: 10-generation.conf\n      content: ${JSON.stringify(u.dropIn)}\n`).join("")}  files:
${[...files].map(([path, f]) => `  - path: ${path}\n    permissions: ${f.mode}\n    content: {inline: {encoding: b64, data: ${b64(f.content)}}}\n`).join("")}`;
  return { n, yaml, files, units };
}

const checksumOf = (g: Generation) => new Bun.CryptoHasher("sha256").update(g.yaml).digest("hex");

const OWN_TEMP = /^\..+\.tmp-[0-9a-f]{12}$/;

/** Every temp file of an interrupted atomic write under the root. */
function strayTemps(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (OWN_TEMP.test(e.name)) out.push(p.slice(root.length));
    }
  };
  walk(root);
  return out.sort();
}

/** Restart=always: whenever the agent exits (killed or on its own), a new one starts. */
class Supervisor {
  current: AgentProcess | undefined;
  spawns = 0;
  exitsOnTheirOwn = 0;
  #killing = new Set<AgentProcess>();
  readonly #killed = new WeakSet<AgentProcess>();
  #stopped = false;
  #loop: Promise<void> | undefined;
  #waiters: Array<() => void> = [];

  constructor(
    private readonly sb: Sandbox,
    private readonly afterExit: () => void,
  ) {}

  start(): void {
    this.#loop = (async () => {
      while (!this.#stopped) {
        const agent = this.sb.spawnAgent(AGENT_ENV);
        this.spawns++;
        this.current = agent;
        for (const w of this.#waiters.splice(0)) w();
        await agent.proc.exited;
        this.current = undefined;
        // Without API server the agent exits 1 at start (node discovery fails), as upstream does.
        const killed = this.#killing.delete(agent);
        if (!killed) this.exitsOnTheirOwn++;
        this.afterExit();
        if (!this.#stopped) await Bun.sleep(killed ? RESPAWN_MS : RESPAWN_AFTER_FAILURE_MS); // the stand-in for RestartSec
      }
    })();
  }

  /** The running agent (waits for the respawn when there is none). */
  async agent(): Promise<AgentProcess> {
    while (this.current === undefined) await new Promise<void>((resolve) => this.#waiters.push(resolve));
    return this.current;
  }

  /** SIGKILL the running agent, if it has not exited meanwhile; true when this call killed it. */
  kill(agent: AgentProcess): boolean {
    if (agent !== this.current || this.#killed.has(agent) || agent.proc.exitCode !== null || agent.proc.signalCode !== null) return false;
    this.#killed.add(agent);
    this.#killing.add(agent);
    agent.proc.kill("SIGKILL");
    return true;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    const agent = this.current;
    if (agent !== undefined) await agent.stop("SIGTERM");
    await this.#loop;
  }
}

/** Whether `f` came true in time: in a kill round a moment that passed is an outcome, not a failure. */
const cameTrue = (what: string, f: () => boolean, timeoutMs: number): Promise<boolean> =>
  eventually(what, f, { timeoutMs, intervalMs: 2 }).then(
    () => true,
    (e: unknown) => {
      if (e instanceof EventuallyTimeout) return false;
      throw e;
    },
  );

let sandbox: Sandbox | undefined;
let supervisor: Supervisor | undefined;
afterEach(async () => {
  await supervisor?.stop();
  supervisor = undefined;
  await sandbox?.stop();
  sandbox = undefined;
});

test("the agent converges after 20 random kills, a 30 s API outage and a bus restart, with no stray temp file", async () => {
  const random = rng(SEED);
  const pick = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
  let onAction: (() => void) | undefined;
  const sb = await startSandbox({ nodeName: "chaos-worker", systemd: { onAction: () => onAction?.() } });
  sandbox = sb;
  const at = (p: string) => join(sb.root, p);
  let tempsSeenAfterKills = 0;
  const sup = new Supervisor(sb, () => {
    tempsSeenAfterKills += strayTemps(sb.root).length;
  });
  supervisor = sup;

  const converged: number[] = [];
  let orphanedMarkers = 0;
  const expectConverged = async (g: Generation, label: string) => {
    const started = Date.now();
    await sb.waitForApplied(checksumOf(g), 90_000);
    const ms = Date.now() - started;
    for (const [path, f] of g.files) {
      expect(readFileSync(at(path), "utf8")).toBe(f.content);
      expect(statSync(at(path)).mode & 0o7777).toBe(f.mode);
    }
    // Files of an earlier fully applied generation are gone. Those that only a never-finished
    // generation wrote may stay (spec osc-controller §5.1: diffs go against the last fully applied OSC).
    const markers = readdirSync(at("/etc/chaos/markers"));
    expect(markers).toContain(`generation-${g.n}`);
    for (const earlier of converged) expect(markers).not.toContain(`generation-${earlier}`);
    converged.push(g.n);
    orphanedMarkers = markers.length - 1;
    for (const [name, u] of g.units) {
      expect(readFileSync(at(`/etc/systemd/system/${name}`), "utf8")).toBe(u.content);
      expect(readFileSync(at(`/etc/systemd/system/${name}.d/10-generation.conf`), "utf8")).toBe(u.dropIn);
      expect(sb.systemd.units.get(name)?.activeState).toBe("active");
    }
    // The start-up clean-up runs beside the controllers: give it the moment it needs.
    await eventually("no stray temp file", () => strayTemps(sb.root), {
      until: (temps) => temps.length === 0,
      timeoutMs: 5_000,
      intervalMs: 2,
    });
    expect(strayTemps(sb.root)).toEqual([]);
    return { label, convergeMs: ms };
  };

  let gen = generation(0);
  sb.setOsc(gen.yaml);
  sup.start();
  const figures: Record<string, unknown>[] = [await expectConverged(gen, "initial")];
  const kills: string[] = [];

  /** The Node says the current generation is applied: nothing left to interrupt. */
  const applied = () =>
    (sb.node()?.["metadata"] as { annotations?: Record<string, string> } | undefined)?.annotations?.["checksum/cloud-config-data"] ===
    checksumOf(gen);
  const occurrences = (a: AgentProcess | undefined, text: string) => (a === undefined ? 0 : a.output().split(text).length - 1);

  /** One kill: a new generation most of the time, then a SIGKILL at the chosen moment. */
  const killRound = async (mode: "action" | "writes" | "wait", freshGeneration: boolean) => {
    const before = sup.current;
    const writesBefore = occurrences(before, "Applying changed files");
    if (freshGeneration) {
      gen = generation(gen.n + 1);
      sb.setOsc(gen.yaml);
    }
    let agent = await sup.agent();
    let how: string = mode;
    let killed = false;
    if (mode === "action") {
      // Each apply makes ~2 calls per unit plus a daemon-reload: the kill comes with one of them.
      let remaining = pick(1, 2 * UNITS + 1);
      const fired = new Promise<boolean>((resolve) => {
        onAction = () => {
          if (--remaining > 0) return;
          onAction = undefined;
          resolve(sup.kill(agent));
        };
      });
      // The apply may end before that call (a resumed one has less to do): then the kill comes late.
      killed = await Promise.race([fired, cameTrue("the apply's end", applied, 10_000).then(() => false)]);
      onAction = undefined;
      if (!killed) how = "action-late";
    } else if (mode === "writes") {
      // A few ms into the group write of ~1.2 MB: temp files are on disk, not yet renamed.
      const base = agent === before ? writesBefore : 0;
      const writing = () => occurrences(agent, "Applying changed files") > base;
      if ((await cameTrue("the file writes", () => writing() || applied(), 10_000)) && writing()) await Bun.sleep(pick(0, 40));
      else how = "writes-late";
    }
    // "wait", or the moment above passed: a kill after a random delay. An agent that exited on its
    // own meanwhile is replaced, and its successor is killed instead.
    // During the outage an agent lives well under a second (its start fails): kill it early in that life.
    const [lo, hi] = mode === "wait" ? [50, 400] : [300, 3_000];
    let delay = mode === "wait" || how.endsWith("-late");
    while (!killed) {
      if (delay) await Bun.sleep(pick(lo, hi));
      killed = sup.kill(agent);
      if (!killed) {
        await agent.proc.exited;
        agent = await sup.agent();
        delay = true;
      }
    }
    await agent.proc.exited;
    kills.push(how);
  };

  const chaosStarted = Date.now();
  const phaseEnds: number[] = [];
  // Phase 1: kills during applies.
  for (let i = 0; i < PHASES.before; i++) await killRound(random() < 0.5 ? "action" : "writes", random() < 0.75 || i === 0);
  phaseEnds.push(Date.now());
  figures.push(await expectConverged(gen, "after phase 1 (kills)"));

  // Phase 2: while an apply talks to systemd, the API server goes away for 30 s (first call) and the
  // system bus restarts (a few calls later).
  let outageStarted = 0;
  let refused: Promise<void> | undefined;
  const busAt = pick(2, 2 * UNITS);
  let calls = 0;
  const busRestarted = new Promise<void>((resolve, reject) => {
    onAction = () => {
      calls++;
      if (calls === 1) {
        outageStarted = Date.now();
        refused = sb.sim.faults.refuseConnections(OUTAGE_MS);
      }
      if (calls === busAt) {
        onAction = undefined;
        // Not from inside the double's call handler: right after it.
        setTimeout(() => sb.systemd.restartBus().then(resolve, reject), 0);
      }
    };
  });
  gen = generation(gen.n + 1);
  sb.setOsc(gen.yaml);
  await busRestarted;
  await refused;
  for (let i = 0; i < PHASES.during; i++) {
    await killRound("wait", random() < 0.5);
  }
  await eventually("the end of the outage", () => Date.now() - outageStarted > OUTAGE_MS, { timeoutMs: OUTAGE_MS + 5_000, intervalMs: 2 });
  expect(sb.sim.faults.reopenFailure).toBeUndefined();

  phaseEnds.push(Date.now());
  // Phase 3: kills during applies again, right after the outage.
  for (let i = PHASES.before + PHASES.during; i < KILLS; i++) await killRound(random() < 0.5 ? "action" : "writes", random() < 0.75);
  const lastKill = Date.now();
  phaseEnds.push(lastKill);
  figures.push(await expectConverged(gen, "final"));
  // The Node may have been annotated before the last kill: the agent started after it must heartbeat.
  const renewed = () => {
    const lease = sb.sim.store.get("leases", "kube-system", "gardener-node-agent-chaos-worker") as
      | { spec: { renewTime: string } }
      | undefined;
    return Date.parse(lease?.spec.renewTime ?? "") > lastKill;
  };
  await eventually("the Lease renewal", renewed, { timeoutMs: 30_000, intervalMs: 2 });
  expect(renewed()).toBe(true);

  expect(kills).toHaveLength(KILLS);
  console.log(
    `chaos: ${JSON.stringify({
      seed: SEED,
      kills: kills.reduce<Record<string, number>>((acc, k) => ({ ...acc, [k]: (acc[k] ?? 0) + 1 }), {}),
      spawns: sup.spawns,
      exitsOnTheirOwn: sup.exitsOnTheirOwn,
      tempsSeenAfterKills,
      orphanedMarkers,
      generations: gen.n + 1,
      chaosSeconds: Math.round((Date.now() - chaosStarted) / 100) / 10,
      phaseSeconds: phaseEnds.map((t, i) => Math.round((t - (i === 0 ? chaosStarted : (phaseEnds[i - 1] ?? 0))) / 100) / 10),
      convergeAfterLastKillMs: Date.now() - lastKill,
      figures,
    })}`,
  );
}, 240_000);
