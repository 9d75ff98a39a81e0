import { mkdtemp, mkdir, readdir, rm, stat, writeFile, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { startApiServer, type ApiServerSim } from "../doubles/apiserver/index.ts";
import { startSystemdDouble, type SystemdDouble, type SystemdDoubleOptions } from "../doubles/systemd/index.ts";
import { type NodeStandIns, startNodeStandIns } from "./node-standins.ts";
import { putOscSecret } from "./osc-secret.ts";
import { reservePort } from "./ports.ts";

/**
 * A whole-binary sandbox: the API-server simulator, the systemd D-Bus double, a temporary --root with
 * the agent's config, client-certificate kubeconfig and machine-name, and the Node the agent runs on.
 * Used by `make demo`, the whole-binary suites and the benchmarks.
 */
export interface Sandbox {
  readonly sim: ApiServerSim;
  readonly systemd: SystemdDouble;
  readonly root: string;
  readonly nodeName: string;
  readonly secretName: string;
  readonly binary: string;
  readonly healthPort: number;
  readonly metricsPort: number;
  /** Creates or replaces the OSC Secret; returns its checksum (sha256 of osc.yaml). */
  setOsc(oscYaml: string): string;
  /** Starts the agent binary against the sandbox. */
  spawnAgent(extraEnv?: Record<string, string>): AgentProcess;
  /** Waits until the Node carries `checksum/cloud-config-data=<checksum>`. */
  waitForApplied(checksum: string, timeoutMs?: number): Promise<void>;
  /** The Node object as stored. */
  node(): Record<string, unknown> | undefined;
  /** Files under the root (host paths), with mode and size, excluding the agent's own state dir. */
  listFiles(under?: string): Promise<{ path: string; mode: string; size: number }[]>;
  readHostFile(path: string): Promise<string>;
  /** A path beside the root, not under it (an input file the host must not see); removed by `stop`. */
  besideRoot(name: string): string;
  stop(): Promise<void>;
}

export interface AgentProcess {
  readonly proc: ReturnType<typeof Bun.spawn>;
  readonly output: () => string;
  stop(signal?: NodeJS.Signals): Promise<number>;
}

export interface SandboxOptions {
  readonly binary?: string;
  readonly nodeName?: string;
  readonly machineName?: string;
  readonly secretName?: string;
  readonly kubernetesVersion?: string;
  readonly createNode?: boolean;
  readonly extraConfig?: Record<string, unknown>;
  readonly systemd?: SystemdDoubleOptions;
  readonly credentials?: "client-cert" | "bootstrap-token";
  /** Directory in which the temporary --root is made (default the OS temp dir), e.g. another file system. */
  readonly rootParent?: string;
}

export const agentBinary = join(import.meta.dir, "../../dist/gardener-node-agent");

export async function binaryVersion(binary = agentBinary): Promise<string> {
  const out = Bun.spawnSync([binary, "--version"]).stdout.toString().trim();
  return out.split(/\s+/).pop() ?? "";
}

export interface AgentRootOptions {
  readonly sim: ApiServerSim;
  readonly binary: string;
  readonly nodeName: string;
  readonly machineName: string;
  readonly secretName: string;
  readonly healthPort: number;
  readonly metricsPort: number;
  readonly kubernetesVersion?: string;
  readonly extraConfig?: Record<string, unknown>;
  readonly createNode?: boolean;
  /**
   * "client-cert" (default): a ready kubeconfig; "bootstrap-token": only a bootstrap token, as on first
   * boot; "cluster-admin": a ready kubeconfig whose certificate is in system:masters (a cluster set up
   * without Gardener's node-agent authorizer).
   */
  readonly credentials?: "client-cert" | "bootstrap-token" | "cluster-admin";
  /** Directory in which the temporary --root is made (default the OS temp dir). */
  readonly rootParent?: string;
}

/**
 * A temporary --root holding what a bootstrapped node has: the config for the binary's version, the
 * cluster CA, machine-name and a client-certificate kubeconfig authorised like the node-agent
 * authorizer would (own Node, the OSC Secret); plus the Node itself in the simulator.
 */
export async function createAgentRoot(o: AgentRootOptions): Promise<string> {
  const { sim, nodeName, machineName, secretName } = o;
  const root = await mkdtemp(join(o.rootParent ?? tmpdir(), "gna-sandbox-"));
  const stateDir = join(root, "var/lib/gardener-node-agent");
  await mkdir(join(stateDir, "credentials"), { recursive: true });
  const version = await binaryVersion(o.binary);
  const config = {
    apiVersion: "nodeagent.config.gardener.cloud/v1alpha1",
    kind: "NodeAgentConfiguration",
    logFormat: "text",
    apiServer: { server: sim.url, caFile: "/var/lib/gardener-node-agent/cluster-ca.crt" },
    server: {
      healthProbes: { bindAddress: "127.0.0.1", port: o.healthPort },
      metrics: { bindAddress: "127.0.0.1", port: o.metricsPort },
    },
    controllers: {
      operatingSystemConfig: { secretName, kubernetesVersion: o.kubernetesVersion ?? "1.33.0" },
    },
    ...o.extraConfig,
  };
  await writeFile(join(stateDir, `config-${version}.yaml`), stringify(config), { mode: 0o600 });
  await writeFile(join(stateDir, "cluster-ca.crt"), sim.caPem, { mode: 0o640 });
  await writeFile(join(stateDir, "machine-name"), `${machineName}\n`, { mode: 0o640 });
  if (o.credentials === "bootstrap-token") {
    const id = Math.random().toString(36).slice(2, 8).padEnd(6, "0");
    const token = sim.addBootstrapToken(id, "0123456789abcdef");
    await writeFile(join(stateDir, "credentials/bootstrap-token"), `${token}\n`, { mode: 0o640 });
  } else {
    const cert =
      o.credentials === "cluster-admin"
        ? await sim.issueClientCert(`cluster-admin:${machineName}`, ["system:masters"])
        : await sim.issueClientCert(`gardener.cloud:node-agent:machine:${machineName}`, ["gardener.cloud:node-agents"]);
    const kubeconfig = sim.kubeconfig({ clientCert: cert }, { caPath: "/var/lib/gardener-node-agent/cluster-ca.crt", name: "node-agent" });
    await writeFile(join(stateDir, "credentials/kubeconfig"), kubeconfig, { mode: 0o600 });
  }

  sim.setMachineNode(machineName, nodeName);
  sim.allowSecret(machineName, secretName);
  if (o.createNode !== false) {
    sim.store.create("nodes", {
      apiVersion: "v1",
      kind: "Node",
      metadata: { name: nodeName, labels: { "kubernetes.io/hostname": nodeName } },
    });
    // What kubelet reports on a healthy node: an address and Ready (the health check reads both).
    sim.store.patch("nodes", "", nodeName, "merge", { status: healthyNodeStatus() }, { subresource: "status" });
  }
  return root;
}

let nodeIndex = 0;
/** kubelet's view of a healthy node: an InternalIP (distinct per node) and the Ready condition. */
function healthyNodeStatus(): Record<string, unknown> {
  nodeIndex += 1;
  const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  return {
    addresses: [{ type: "InternalIP", address: `10.250.${Math.floor(nodeIndex / 250)}.${(nodeIndex % 250) + 1}` }],
    conditions: [
      {
        type: "Ready",
        status: "True",
        reason: "KubeletReady",
        message: "kubelet is posting ready status",
        lastHeartbeatTime: now,
        lastTransitionTime: now,
      },
    ],
  };
}

/** The environment the agent binary (or a command) runs with in a sandbox; `standIns` for the agent run. */
export const agentEnv = (
  systemdAddress: string,
  nodeName: string,
  extra: Record<string, string> = {},
  standIns?: Pick<NodeStandIns, "binDir" | "kubeletHealthUrl">,
) => ({
  PATH: `${standIns === undefined ? "" : `${standIns.binDir}:`}${process.env["PATH"] ?? "/usr/bin:/bin"}`,
  DBUS_SYSTEM_BUS_ADDRESS: systemdAddress,
  GARDENER_NODE_AGENT_HOSTNAME: nodeName,
  ...(standIns === undefined ? {} : { GARDENER_NODE_AGENT_KUBELET_HEALTHZ_URL: standIns.kubeletHealthUrl }),
  ...extra,
});

/** Starts the agent binary on `root` with `env`, collecting its stdout and stderr for `output()`. */
export function spawnAgentProcess(binary: string, root: string, env: Record<string, string>): AgentProcess {
  let out = "";
  const proc = Bun.spawn([binary, "--config-dir=/var/lib/gardener-node-agent", `--root=${root}`], { env, stdout: "pipe", stderr: "pipe" });
  const drain = async (s: ReadableStream<Uint8Array>) => {
    const dec = new TextDecoder();
    for await (const chunk of s) out += dec.decode(chunk, { stream: true });
  };
  const drained = Promise.all([drain(proc.stdout as ReadableStream<Uint8Array>), drain(proc.stderr as ReadableStream<Uint8Array>)]);
  return {
    proc,
    output: () => out,
    async stop(signal = "SIGTERM") {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      const code = await proc.exited;
      await drained;
      return code;
    },
  };
}

export async function startSandbox(opts: SandboxOptions = {}): Promise<Sandbox> {
  const binary = opts.binary ?? agentBinary;
  const nodeName = opts.nodeName ?? "worker-1";
  const machineName = opts.machineName ?? `machine-${nodeName}`;
  const secretName = opts.secretName ?? "gardener-node-agent-worker-pool";
  const sim = await startApiServer();
  const systemd = await startSystemdDouble(opts.systemd);
  const standIns = await startNodeStandIns();
  const [healthPort, metricsPort] = [reservePort(), reservePort()];
  const root = await createAgentRoot({
    sim,
    binary,
    nodeName,
    machineName,
    secretName,
    healthPort,
    metricsPort,
    ...(opts.kubernetesVersion !== undefined ? { kubernetesVersion: opts.kubernetesVersion } : {}),
    ...(opts.extraConfig !== undefined ? { extraConfig: opts.extraConfig } : {}),
    ...(opts.createNode !== undefined ? { createNode: opts.createNode } : {}),
    ...(opts.credentials !== undefined ? { credentials: opts.credentials } : {}),
    ...(opts.rootParent !== undefined ? { rootParent: opts.rootParent } : {}),
  });

  const agents: AgentProcess[] = [];
  const besides = new Set<string>();
  const sandbox: Sandbox = {
    sim,
    systemd,
    root,
    nodeName,
    secretName,
    binary,
    healthPort,
    metricsPort,
    setOsc: (oscYaml) => putOscSecret(sim, secretName, oscYaml, { labels: { "gardener.cloud/role": "operating-system-config" } }),
    spawnAgent(extraEnv = {}) {
      const agent = spawnAgentProcess(binary, root, agentEnv(systemd.address, nodeName, extraEnv, standIns));
      agents.push(agent);
      return agent;
    },
    async waitForApplied(checksum, timeoutMs = 30_000) {
      await sim.waitFor(
        "nodes",
        "",
        nodeName,
        (n) => {
          const ann = (n?.["metadata"] as { annotations?: Record<string, string> } | undefined)?.annotations;
          return ann?.["checksum/cloud-config-data"] === checksum;
        },
        timeoutMs,
      );
    },
    node: () => sim.store.get("nodes", "", nodeName) as Record<string, unknown> | undefined,
    async listFiles(under = "/") {
      const out: { path: string; mode: string; size: number }[] = [];
      const walk = async (dir: string): Promise<void> => {
        const entries = await readdir(join(root, dir), { withFileTypes: true }).catch(() => []);
        for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
          const p = join(dir, e.name);
          if (p.startsWith("/var/lib/gardener-node-agent")) continue;
          if (e.isDirectory()) await walk(p);
          else if (e.isSymbolicLink()) out.push({ path: p, mode: "link", size: 0 });
          else {
            const st = await stat(join(root, p));
            out.push({ path: p, mode: (st.mode & 0o7777).toString(8).padStart(4, "0"), size: st.size });
          }
        }
      };
      await walk(under);
      return out;
    },
    readHostFile: (path) => readFile(join(root, path), "utf8"),
    besideRoot(name) {
      const path = `${root}-${name}`;
      besides.add(path);
      return path;
    },
    async stop() {
      await Promise.all(agents.map((a) => a.stop("SIGKILL")));
      await systemd.stop();
      await standIns.stop();
      await sim.stop();
      await Promise.all([root, ...besides].map((p) => rm(p, { recursive: true, force: true })));
    },
  };
  return sandbox;
}
