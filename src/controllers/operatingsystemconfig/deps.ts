import type { Clock } from "../../clock/index.ts";
import type { TokenSyncConfig } from "../../config/index.ts";
import type { HostFs } from "../../host/index.ts";
import type { Kube, KubeObject, ObjectKey } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import type { Systemd } from "../../systemd/index.ts";
import type { EventRecorder } from "../events.ts";
import type { NodeIdentity as SharedNodeIdentity } from "../shared/index.ts";
import type { ApplyLock } from "./apply/apply-lock.ts";
import type { DriftStatus } from "./features/drift/index.ts";
import type { ContainerdInfo, ProbeFetch } from "./apply/containerd/index.ts";
import type { RolloutDeps } from "./features/rollout/index.ts";
import type { OscMetrics } from "./report/metrics.ts";
import type { InPlaceDeps } from "./features/inplace/index.ts";

/** Pulls one file out of an OCI image (src/registry `extractFileFromImage` bound to a client and cache in wiring). */
export type ExtractImageFile = (image: string, filePathInImage: string, signal: AbortSignal) => Promise<Uint8Array>;

/** The shared node identity; the reconciler fills in the node name once it discovers the Node. */
export type NodeIdentity = Omit<SharedNodeIdentity, "nodeName"> & { nodeName: SharedNodeIdentity["nodeName"] };

export interface OscControllerConfig {
  /** controllers.operatingSystemConfig.secretName */
  readonly secretName: string;
  /** controllers.operatingSystemConfig.kubernetesVersion (written to the Node label) */
  readonly kubernetesVersion: string;
  /** controllers.operatingSystemConfig.syncPeriod in ms (default 10 min) */
  readonly syncPeriodMs: number;
  /** controllers.token.syncConfigs */
  readonly tokenSyncConfigs: readonly TokenSyncConfig[];
}

export interface OscControllerDeps {
  readonly kube: Kube;
  /** Cached read of the OSC Secret; defaults to a live GET through `kube`. */
  readonly readSecret?: (key: ObjectKey, signal: AbortSignal) => Promise<KubeObject | undefined>;
  readonly host: HostFs;
  readonly systemd: Systemd;
  readonly clock: Clock;
  readonly log: Logger;
  readonly events: EventRecorder;
  readonly node: NodeIdentity;
  readonly config: OscControllerConfig;
  /** The agent process' PATH (for the containerd env drop-in). */
  readonly processPath: string;
  readonly containerdInfo: ContainerdInfo;
  readonly probeFetch: ProbeFetch;
  readonly extractImageFile: ExtractImageFile;
  /**
   * Checks the agent image before the agent replaces its own binary (cosign signature when a key is
   * configured); resolves to the reference to pull (pinned to the verified digest), throws
   * ImageSignatureError when the signature is missing or bad. Absent: no check.
   */
  readonly verifyAgentImage?: (image: string, signal: AbortSignal) => Promise<string>;
  /** Architecture of this machine ("amd64", "arm64") for the self-update check. */
  readonly arch: string;
  /**
   * Writes `secret`'s token file now, through the token controller's sync, and resolves when it is on
   * disk (units that read it are started only after that). Absent: nothing is waited for.
   */
  readonly writeTokenFile?: (secret: ObjectKey, signal: AbortSignal) => Promise<void>;
  /**
   * With `unit-failure-policy: revert`: how long units restarted by an apply are watched, and how often
   * they are polled (default 30 s / 1 s).
   */
  readonly unitVerification?: { readonly windowMs: number; readonly pollMs: number };
  /**
   * What the last drift check found; `driftConditionMessage(driftStatus)` is the drift part of the
   * OperatingSystemConfigApplied condition's message.
   */
  readonly driftStatus?: DriftStatus;
  /** Serialises applies with the background drift repair and unit reverts (absent: nothing else writes). */
  readonly applyLock?: ApplyLock;
  /** Ask the token controller to write `secret`'s file again (a synced file was deleted). */
  readonly onTokenResync: (secret: ObjectKey) => void;
  /**
   * Starts the Lease watch of serial reconciliation (9.2) the first time a serial Secret is seen
   * (idempotent); resolves once it has listed the Lease.
   */
  readonly serialLeaseWatch?: { start(signal: AbortSignal): Promise<void> };
  /** Chunked rollouts (issue 16): timings (defaults when absent) and the slot metrics. */
  readonly rollout?: RolloutDeps;
  /** The OSC series (report.ts); none when omitted. */
  readonly metrics?: OscMetrics;
  /** gardenadm mode (self-hosted machine, gardenadm.ts): a provision OSC is applied without state files or restarts. */
  readonly selfHosted?: boolean;
  /** OS update command, kubelet healthz, agent certificate renewal (§9.3); an in-place OSC fails without it. */
  readonly inPlace?: InPlaceDeps;
}

export { changesPath, stateDir } from "../shared/index.ts";
import { stateDir } from "../shared/index.ts";
export const zonePath = `${stateDir}/zone`;
export const bootstrapTokenPath = `${stateDir}/credentials/bootstrap-token`;
export const kubeletBootstrapKubeconfigPath = "/var/lib/kubelet/kubeconfig-bootstrap";
export const unitDir = "/etc/systemd/system";
export const agentUnitName = "gardener-node-agent.service";
export const agentBinaryPath = "/opt/bin/gardener-node-agent";
export const containerdUnitName = "containerd.service";
