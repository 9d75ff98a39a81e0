import type { Clock } from "../../clock/index.ts";
import type { NodeAgentConfiguration } from "../../config/index.ts";
import type { HostFs } from "../../host/index.ts";
import type { Controller, Kube, KubeObject, ObjectKey, Reader, Source } from "../../kube/index.ts";
import { Channel, enqueueMapped, ifFound, nodes, secrets } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import {
  createAgentImageVerifier,
  createRegistryClient,
  extractFileFromImage,
  loadRegistryCredentials,
  parseDockerConfig,
  registryAuthPath,
} from "../../registry/index.ts";
import type { Systemd } from "../../systemd/index.ts";
import type { EventRecorder } from "../../controllers/events.ts";
import type { MetricsRegistry } from "../../server/index.ts";
import {
  ApplyLock,
  BlockingPodsWatch,
  createCommandRunner,
  createContainerdInfo,
  createKubeletHealthProbe,
  createOscMetrics,
  createReconciler,
  defaultStageMaxBytes,
  driftPathsMetric,
  type DriftStatus,
  firstLookPauseMs,
  newOscController,
  type OscControllerDeps,
  type PendingPullConfig,
  PoolNodes,
  type RolloutDeps,
  runDriftLoop,
  secretChecksum,
  serialLeaseWatch,
  slotsOnlyChanged,
  SlotPoll,
} from "../../controllers/operatingsystemconfig/index.ts";
import type { AgentEnv } from "../env.ts";

const imageCacheDir = "/var/lib/gardener-node-agent/tmp/image-cache";

export interface OscSetup {
  readonly kube: Kube;
  readonly cache: Reader;
  readonly host: HostFs;
  readonly systemd: Systemd;
  readonly clock: Clock;
  readonly log: Logger;
  readonly events: EventRecorder;
  readonly config: NodeAgentConfiguration;
  readonly env: AgentEnv;
  readonly hostName: string;
  readonly nodeName: string | undefined;
  readonly arch: string;
  readonly source: Source<KubeObject>;
  /** The shared own-Node informer (in-place drain gate §2.2, hold annotation). */
  readonly nodeSource: Source<KubeObject>;
  readonly metrics: MetricsRegistry;
  /** CA rotation: a new agent client certificate through a CSR with the current identity. */
  readonly renewAgentCredentials: (signal: AbortSignal) => Promise<void>;
  readonly signal: AbortSignal;
  readonly onRestartRequested: (why: string) => void;
  readonly onTokenResync: (secret: ObjectKey) => void;
  /** After an apply: a systemd unit check now (createUnitCheckNow's `request`). */
  readonly requestUnitCheck?: (nodeName: string) => void;
  /** gardenadm mode (self-hosted machine). */
  readonly selfHosted?: boolean;
  /** Writes a token file now (the token controller's sync), before units that read it start. */
  readonly writeTokenFile?: (secret: ObjectKey, signal: AbortSignal) => Promise<void>;
  /** Where drift checks record what they found (read for the apply condition). */
  readonly driftStatus: DriftStatus;
}

export interface OscControllerSetup {
  readonly controller: Controller;
  /** The background drift checks (start with the controllers; settles when `signal` aborts). */
  readonly drift: (signal: AbortSignal) => Promise<void>;
}

function rolloutDeps(s: OscSetup, wake: () => void): RolloutDeps {
  const timings = s.env.timings.rollout;
  const slotPoll = new SlotPoll({ kube: s.kube, clock: s.clock, timings, wake, signal: s.signal });
  const poolNodes = new PoolNodes(s.clock, timings.renewEveryMs);
  const state = s.metrics.gauge({
    name: "gardener_node_agent_rollout_slot_state",
    help: "This node's slot in a chunked rollout: 0 none, 1 applying, 2 verifying, 3 failed.",
  });
  const wait = s.metrics.gauge({
    name: "gardener_node_agent_rollout_wait_seconds",
    help: "How long this node has been waiting for a rollout slot (0 when not waiting).",
  });
  state.set(0);
  wait.set(0);
  return { timings, poolNodes, slotPoll, metrics: { slotState: (v) => state.set(v), waitSeconds: (v) => wait.set(v) } };
}

/** Binds the OSC reconciler to the real registry, containerd CLI and the Secret cache. */
export function setupOscController(s: OscSetup): OscControllerSetup {
  const log = s.log.child({ controller: "operatingsystemconfig" });
  // Pulls honour the registry mirrors the OSC configures for containerd, as upstream's containerd pulls do.
  // Credentials come from the docker config file an OSC may deliver (read when a registry asks for them).
  const registry = createRegistryClient({
    plainHttpHosts: s.env.plainHttpRegistries,
    hostsDir: { hostFs: s.host, dir: "/etc/containerd/certs.d" },
    credentialSource: () => loadRegistryCredentials(s.host),
  });
  // Staging pulls with the registry-auth.json and hosts.toml the pending version delivers (not on disk yet).
  const forPending = (pending: PendingPullConfig) =>
    createRegistryClient({
      plainHttpHosts: s.env.plainHttpRegistries,
      hostsDir: { hostFs: s.host, dir: "/etc/containerd/certs.d", pending: pending.hostsToml },
      ...(pending.registryAuth !== undefined
        ? { credentials: parseDockerConfig(pending.registryAuth, registryAuthPath) }
        : { credentialSource: () => loadRegistryCredentials(s.host) }),
    });
  const platform = { os: "linux", architecture: s.arch };
  // One identity object: the reconciler fills in the node name when it discovers the Node.
  const node = { hostName: s.hostName, nodeName: s.nodeName };
  const osc = s.config.controllers.operatingSystemConfig;
  /** The OSC Secret: what the controller reconciles and what its wakers (the slot poll, blocking pods) enqueue. */
  const oscSecretKey: ObjectKey = { namespace: "kube-system", name: osc.secretName };
  // 2.3: only with a Node known at start (its label is what lets the authorizer serve this Lease).
  const leaseWatch =
    s.nodeName === undefined
      ? undefined
      : serialLeaseWatch({
          kube: s.kube,
          cache: s.cache,
          clock: s.clock,
          log,
          secretName: osc.secretName,
          hostName: s.hostName.toLowerCase(),
          nodeName: s.nodeName,
          signal: s.signal,
          slotsOnly: slotsOnlyChanged,
        });
  // The blocking-pods gate's pod watch: the authorizer lets it watch only the pods of a known Node.
  const blockingPods =
    s.nodeName === undefined
      ? undefined
      : new BlockingPodsWatch({ kube: s.kube, clock: s.clock, log, events: s.events, nodeName: s.nodeName, signal: s.signal });
  // A waiting node's slot poll enqueues the Secret through this channel (issue 25).
  const slotWake = new Channel<ObjectKey>();
  const rollout = rolloutDeps(s, () => slotWake.send(oscSecretKey));
  // Applies, drift repairs and unit reverts never write at the same time.
  const applyLock = new ApplyLock();
  const deps: OscControllerDeps = {
    kube: s.kube,
    readSecret: (key, signal) => ifFound(s.cache.get<KubeObject>(secrets, key.namespace, key.name, { signal })),
    host: s.host,
    systemd: s.systemd,
    clock: s.clock,
    log,
    events: s.events,
    node,
    config: {
      secretName: osc.secretName,
      kubernetesVersion: osc.kubernetesVersion ?? "",
      syncPeriodMs: osc.syncPeriod,
      tokenSyncConfigs: s.config.controllers.token.syncConfigs ?? [],
    },
    processPath: s.env.processPath,
    containerdInfo: createContainerdInfo(),
    probeFetch: (url, init) => fetch(url, init),
    extractImageFile: async (image, filePathInImage, signal, pending) =>
      (
        await extractFileFromImage({
          registry: pending === undefined ? registry : forPending(pending),
          hostFs: s.host,
          cacheDir: imageCacheDir,
          image,
          filePathInImage,
          platform,
          signal,
        })
      ).data,
    verifyAgentImage: createAgentImageVerifier(registry, s.host),
    arch: s.arch,
    onTokenResync: s.onTokenResync,
    ...(s.requestUnitCheck !== undefined ? { requestUnitCheck: s.requestUnitCheck } : {}),
    ...(s.writeTokenFile !== undefined ? { writeTokenFile: s.writeTokenFile } : {}),
    applyLock,
    driftStatus: s.driftStatus,
    unitVerification: unitVerification(s.env.timings.unitVerifyWindowMs),
    ...(leaseWatch !== undefined ? { serialLeaseWatch: leaseWatch } : {}),
    ...(blockingPods !== undefined ? { blockingPods } : {}),
    rollout,
    metrics: createOscMetrics(s.metrics),
    staging: stagingDeps(s),
    ...(s.selfHosted === true ? { selfHosted: true } : {}),
    inPlace: {
      runCommand: createCommandRunner(),
      kubeletHealthy: createKubeletHealthProbe(s.env.kubeletHealthUrl),
      renewAgentCredentials: s.renewAgentCredentials,
      apiServer: { server: s.config.apiServer.server, caFile: s.config.apiServer.caFile ?? "" },
    },
  };
  const reconcile = createReconciler(deps);
  const gauge = s.metrics.gauge({
    name: driftPathsMetric,
    help: "Managed files, units, drop-ins and enablements that differed from the last-applied operating system config in the last drift check.",
  });
  // Drift checks run beside the controller, at start and every sync period; they never hold it up.
  const drift = (signal: AbortSignal) =>
    runDriftLoop(
      { osc: deps, lock: applyLock, status: s.driftStatus, readNode: (sig) => readOwnNode(s.cache, node.nodeName, sig), gauge },
      s.env.timings.driftCheckPeriodMs ?? osc.syncPeriod,
      signal,
    );
  const controller = newOscController({
    reconcile,
    source: s.source,
    nodeSource: s.nodeSource,
    kube: s.kube,
    nodeReader: s.cache,
    node,
    clock: s.clock,
    log,
    signal: s.signal,
    onRestartRequested: s.onRestartRequested,
    secretKey: oscSecretKey,
    secretName: osc.secretName,
    backoffMaxMs: s.env.timings.oscBackoffMaxMs,
    rolloutPause: (n, secret) => firstLookPauseMs(rollout, secretChecksum(secret), n, s.clock.now()),
  });
  leaseWatch?.attach(controller);
  controller.watch(
    slotWake,
    enqueueMapped((key: ObjectKey) => [key]),
  );
  blockingPods?.attach(controller, s.nodeSource, oscSecretKey);
  return { controller, drift };
}

/** Pre-staged applies (issue 23): the size bound from the config file, and the stage's gauge. */
function stagingDeps(s: OscSetup): NonNullable<OscControllerDeps["staging"]> {
  const gauge = s.metrics.gauge({
    name: "gardener_node_agent_staged_bytes",
    help: "Bytes of image and secret content staged for the current and the pending operating system config.",
  });
  gauge.set(0);
  const maxBytes = s.config.controllers.operatingSystemConfig.stagingMaxBytes ?? defaultStageMaxBytes;
  return { maxBytes, stagedBytes: (n) => gauge.set(n) };
}

async function readOwnNode(cache: Reader, nodeName: string | undefined, signal: AbortSignal): Promise<KubeObject | undefined> {
  if (nodeName === undefined) return undefined;
  return ifFound(cache.get<KubeObject>(nodes, "", nodeName, { signal }));
}

/** The verification window (30 s unless shortened) and a poll of a tenth of it, kept within 50 ms–1 s. */
function unitVerification(windowMs: number): { windowMs: number; pollMs: number } {
  return { windowMs, pollMs: Math.min(1_000, Math.max(50, Math.floor(windowMs / 10))) };
}
