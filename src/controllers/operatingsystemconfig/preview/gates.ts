import type { Clock } from "../../../clock/index.ts";
import type { HostFs } from "../../../host/index.ts";
import type { Kube, KubeObject } from "../../../kube/index.ts";
import { nopLogger } from "../../../log/index.ts";
import type { Osc, OscChanges } from "../../../osc/index.ts";
import { isSerial } from "../constants.ts";
import { type GatePreview, previewGateList } from "../gates/preview.ts";
import { oscGates, type RolloutTimings } from "../plugins.ts";

export interface GatePreviewInput {
  /** The unit-revert gate reads the persisted change set (a reverted version) from here. */
  readonly host: HostFs;
  /** undefined offline: the gates that read the API server are reported as not checked. */
  readonly kube: Kube | undefined;
  readonly node: KubeObject | undefined;
  readonly secret: KubeObject | undefined;
  /** The OSC as decoded (static pod manifests are read from it). */
  readonly osc: Osc;
  readonly checksum: string;
  readonly hostName: string;
  readonly changes: OscChanges;
  readonly clock: Clock;
  readonly rolloutTimings: RolloutTimings;
}

/** Stands in for what a dry run never reaches (the API server offline). */
export const unreachable = <T extends object>(message: string): T =>
  new Proxy({} as T, {
    get: () => () => {
      throw new Error(message);
    },
  });

/**
 * Every gate that would stop or delay the apply of `checksum`, in the order the reconcile meets them:
 * the list of plugins.ts, each gate's own `decide`, dry (gates/preview.ts). Only reads.
 */
export function previewGates(input: GatePreviewInput, signal: AbortSignal): Promise<GatePreview[]> {
  const { kube, node, secret } = input;
  const gates = oscGates({
    kube: kube ?? unreachable<Kube>("no API server in a gate preview"),
    host: input.host,
    clock: input.clock,
    log: nopLogger,
    node: { hostName: input.hostName },
    config: { syncPeriodMs: 0 },
    rollout: { timings: input.rolloutTimings },
  });
  return previewGateList(gates, {
    checksum: input.checksum,
    osc: input.osc,
    secret,
    serial: secret !== undefined && isSerial(secret),
    node,
    // `diff` takes no lock or slot: a registered Node counts as known.
    nodeKnownAtStart: node !== undefined,
    changes: async () => input.changes,
    dryRun: true,
    online: kube !== undefined,
    signal,
  });
}
