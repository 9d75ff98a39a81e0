import type { TokenSyncConfig } from "../../config/index.ts";
import type { KubeObject, ObjectKey } from "../../kube/index.ts";
import type { ApplyLock } from "./apply/apply-lock.ts";
import type { ApplyPorts } from "./apply/ports.ts";
import type { BlockingPodsSource } from "./features/blockingpods/index.ts";
import type { DriftStatus } from "./features/drift/index.ts";
import type { InPlaceDeps } from "./features/inplace/index.ts";
import type { RolloutDeps } from "./features/rollout/index.ts";
import type { OscMetrics } from "./report/metrics.ts";

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

/** Everything the OSC controller is built from; only the room's top-level files name it. */
export interface OscControllerDeps extends ApplyPorts {
  /** Cached read of the OSC Secret; defaults to a live GET through `kube`. */
  readonly readSecret?: (key: ObjectKey, signal: AbortSignal) => Promise<KubeObject | undefined>;
  readonly config: OscControllerConfig;
  /** `unit-failure-policy: revert`: how long restarted units are watched, and the poll (default 30 s / 1 s). */
  readonly unitVerification?: { readonly windowMs: number; readonly pollMs: number };
  /** What the last drift check found (part of the condition's message). */
  readonly driftStatus?: DriftStatus;
  /** Serialises applies with the background drift repair and unit reverts (absent: nothing else writes). */
  readonly applyLock?: ApplyLock;
  /**
   * The pool Lease's watch for the serial lock (9.2): `start` (idempotent) at the serial gate's first need,
   * resolves once listed; `done` once the lock is released — it stops.
   */
  readonly serialLeaseWatch?: {
    start(signal: AbortSignal): Promise<void>;
    done?(): void;
  };
  /** The pod watch of the blocking-pods gate (only with a Node known at start); `diff` lists once instead. */
  readonly blockingPods?: BlockingPodsSource;
  /** Chunked rollouts (issue 16): timings (defaults when absent) and the slot metrics. */
  readonly rollout?: RolloutDeps;
  /**
   * Asks the systemd unit check for a check of this Node now (shared/unit-check-now.ts), after an apply that
   * changed the host: `SystemdUnitsReady` and a verifying rollout slot need not wait for its sync period.
   */
  readonly requestUnitCheck?: (nodeName: string) => void;
  /** The OSC series (report/); none when omitted. */
  readonly metrics?: OscMetrics;
  /** Pre-staged applies (issue 23, stage/): the stage's size bound and its gauge; absent, nothing is staged. */
  readonly staging?: { readonly maxBytes: number; readonly stagedBytes?: (bytes: number) => void };
  /** OS update command, kubelet healthz, agent certificate renewal (§9.3); an in-place OSC fails without it. */
  readonly inPlace?: InPlaceDeps;
}
