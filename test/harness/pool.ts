import { rm } from "node:fs/promises";
import { join } from "node:path";
import { readFile } from "node:fs/promises";
import { startApiServer, type ApiServerSim } from "../doubles/apiserver/index.ts";
import { startSystemdDouble, type SystemdAction, type SystemdDouble } from "../doubles/systemd/index.ts";
import { startNodeStandIns, type NodeStandIns } from "./node-standins.ts";
import { putOscSecret } from "./osc-secret.ts";
import { reservePort } from "./ports.ts";
import { agentBinary, agentEnv, createAgentRoot, spawnAgentProcess, type AgentProcess } from "./sandbox.ts";

/**
 * A worker pool for whole-binary tests: several compiled agents, each with its own --root, Node and
 * systemd double, against ONE API-server simulator and one OSC Secret — what serial and chunked
 * rollouts coordinate over.
 */
export interface PoolMember {
  readonly nodeName: string;
  readonly root: string;
  readonly systemd: SystemdDouble;
  /** The agent's /metrics on 127.0.0.1. */
  readonly metricsPort: number;
  /** systemd actions with the wall-clock time they arrived. */
  readonly actions: readonly TimedAction[];
  /** Called synchronously for every systemd action as it arrives (e.g. to SIGKILL the agent mid-apply). */
  onAction: ((a: TimedAction) => void) | undefined;
  agent: AgentProcess | undefined;
  spawn(extraEnv?: Record<string, string>): AgentProcess;
  readHostFile(path: string): Promise<string | undefined>;
  /** The Node's `checksum/cloud-config-data`. */
  appliedChecksum(): string | undefined;
}

export interface TimedAction extends SystemdAction {
  readonly at: number;
}

export interface Pool {
  readonly sim: ApiServerSim;
  readonly secretName: string;
  readonly members: readonly PoolMember[];
  /** Creates or replaces the OSC Secret; returns the checksum. */
  setOsc(oscYaml: string, annotations?: Record<string, string>): string;
  stop(): Promise<void>;
}

const secretNameLabel = "worker.gardener.cloud/gardener-node-agent-secret-name";

export interface PoolOptions {
  readonly nodes: readonly string[];
  readonly secretName?: string;
  readonly nodeLabels?: Record<string, string>;
  /** Put the pool label on the Nodes (default true; machine-controller-manager does, other joins may not). */
  readonly poolLabel?: boolean;
  readonly nodeAnnotations?: Record<string, string>;
  /** The agents' credentials (default the node-agent client certificate). */
  readonly credentials?: "client-cert" | "cluster-admin";
  /** Top-level config fields (a `controllers` entry replaces the default one, so repeat the OSC part). */
  readonly extraConfig?: Record<string, unknown>;
}

export async function startPool(opts: PoolOptions): Promise<Pool> {
  const secretName = opts.secretName ?? "gardener-node-agent-pool";
  const sim = await startApiServer({ requestLogLimit: 1_000_000 });
  const standIns: NodeStandIns = await startNodeStandIns();
  const members: PoolMember[] = [];
  for (const nodeName of opts.nodes) {
    const actions: TimedAction[] = [];
    let member: PoolMember | undefined;
    const systemd = await startSystemdDouble({
      onAction: (a) => {
        const timed = { ...a, at: Date.now() };
        actions.push(timed);
        member?.onAction?.(timed);
      },
    });
    const metricsPort = reservePort();
    const root = await createAgentRoot({
      sim,
      binary: agentBinary,
      nodeName,
      machineName: `machine-${nodeName}`,
      secretName,
      healthPort: reservePort(),
      metricsPort,
      ...(opts.extraConfig !== undefined ? { extraConfig: opts.extraConfig } : {}),
      ...(opts.credentials !== undefined ? { credentials: opts.credentials } : {}),
    });
    // What the machine template puts on every Node of a pool; the authorizer's Lease rule relies on it.
    sim.store.patch("nodes", "", nodeName, "merge", {
      metadata: {
        labels: { ...(opts.poolLabel === false ? {} : { [secretNameLabel]: secretName }), ...opts.nodeLabels },
        ...(opts.nodeAnnotations ? { annotations: opts.nodeAnnotations } : {}),
      },
    });
    const m: PoolMember = {
      nodeName,
      root,
      systemd,
      metricsPort,
      actions,
      onAction: undefined,
      agent: undefined,
      spawn(extraEnv = {}) {
        const agent = spawnAgentProcess(agentBinary, root, agentEnv(systemd.address, nodeName, extraEnv, standIns));
        m.agent = agent;
        return agent;
      },
      readHostFile: (path) => readFile(join(root, path), "utf8").catch(() => undefined),
      appliedChecksum: () =>
        (sim.store.get("nodes", "", nodeName)?.["metadata"] as { annotations?: Record<string, string> } | undefined)?.annotations?.[
          "checksum/cloud-config-data"
        ],
    };
    member = m;
    members.push(m);
  }
  return {
    sim,
    secretName,
    members,
    setOsc: (oscYaml, annotations = {}) => putOscSecret(sim, secretName, oscYaml, { annotations }),
    async stop() {
      await Promise.all(members.map((m) => m.agent?.stop("SIGKILL")));
      for (const m of members) await m.systemd.stop();
      await standIns.stop();
      await sim.stop();
      await Promise.all(members.map((m) => rm(m.root, { recursive: true, force: true })));
    },
  };
}

/**
 * The pool tests' and benches' OSC: one unit whose file carries the version, so every version restarts it;
 * `extraUnits`: more entries of `spec.units`, as YAML list items indented by two spaces.
 */
export const demoOsc = (version: string, extraUnits = "") => `apiVersion: extensions.gardener.cloud/v1alpha1
kind: OperatingSystemConfig
spec:
  units:
  - name: demo.service
    content: "[Service]\\nExecStart=/bin/true\\n"
    filePaths: [/etc/demo/version]
${extraUnits === "" ? "" : `${extraUnits}\n`}  files:
  - path: /etc/demo/version
    permissions: 0644
    content: {inline: {data: "${version}\\n"}}
`;
