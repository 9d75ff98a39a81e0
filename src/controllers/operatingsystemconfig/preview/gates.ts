import type { Clock } from "../../../clock/index.ts";
import type { HostFs } from "../../../host/index.ts";
import type { Kube, KubeObject } from "../../../kube/index.ts";
import { errorText, nopLogger } from "../../../log/index.ts";
import type { Osc, OscChanges } from "../../../osc/index.ts";
import { isSerial } from "../constants.ts";
import { type Decision, type Gate, type GateContext, type GateName, type GateReason, offlineText } from "../gates/gate.ts";
import { disruptionOnce } from "../plan/pending-disruption.ts";
import { oscGates, type RolloutTimings } from "../plugins.ts";

/** One gate as `diff` sees it, decided by the gate's own `decide` on what the API server says now. */
export interface GatePreview {
  readonly gate: GateName;
  /**
   * `stops`: nothing of the version is applied while it holds. `after-apply`: the files and units are
   * applied, the checksum annotation waits. `not-checked`: it needs the API server (offline) or could not be read.
   */
  readonly verdict: "stops" | "after-apply" | "not-checked";
  /** The reason the Node condition would show (absent when not checked). */
  readonly reason?: GateReason | "ApplyFailed";
  readonly message: string;
}

function verdictOf(gate: Gate, d: Decision): GatePreview[] {
  if (d.kind === "unknown") return [{ gate: gate.name, verdict: "not-checked", message: d.why }];
  if (d.kind === "hold") {
    const verdict = gate.phase === "record" ? "after-apply" : "stops";
    return [{ gate: gate.name, verdict, reason: d.hold.reason, message: d.hold.message }];
  }
  return d.note === undefined ? [] : [{ gate: gate.name, verdict: "after-apply", reason: d.note.reason, message: d.note.message }];
}

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

/** Stands in for what a dry run or an offline apply never reaches (the API server): every call throws. */
export const unreachable = <T extends object>(error: string | (() => Error)): T =>
  new Proxy({} as T, {
    get: () => () => {
      throw typeof error === "string" ? new Error(error) : error();
    },
  });

/**
 * Every gate that would stop or delay the apply of `checksum`, in the order the reconcile meets them:
 * the list of plugins.ts, each gate's own `decide`, dry (previewGateList). Only reads.
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
  const ctx: GateContext = {
    checksum: input.checksum,
    osc: input.osc,
    secret,
    serial: secret !== undefined && isSerial(secret),
    node,
    // `diff` takes no lock or slot: a registered Node counts as known.
    nodeKnownAtStart: node !== undefined,
    changes: async () => input.changes,
    disruption: disruptionOnce(input.host, input.hostName.toLowerCase(), input.osc, async () => input.changes),
    dryRun: true,
    online: kube !== undefined,
    signal,
  };
  return previewGateList(gates, ctx);
}

/**
 * The dry run of a gate list: each gate's `decide` (never `reserve`) with `ctx.dryRun`. Offline, a gate
 * that needs the API server is not checked; a gate whose objects cannot be read (e.g. forbidden) is
 * reported as not checked, with the reason.
 */
export async function previewGateList(gates: readonly Gate[], ctx: GateContext): Promise<GatePreview[]> {
  const out: GatePreview[] = [];
  for (const gate of gates) {
    if (gate.online === true && !ctx.online) {
      out.push({ gate: gate.name, verdict: "not-checked", message: offlineText });
      continue;
    }
    try {
      out.push(...verdictOf(gate, await gate.decide(ctx)));
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      out.push({ gate: gate.name, verdict: "not-checked", message: `not checked: ${errorText(err)}` });
    }
  }
  return out;
}
