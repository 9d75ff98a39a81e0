import type { ApplyExtension, ApplyPlugins } from "./apply/extension.ts";
import type { OscControllerDeps } from "./deps.ts";
import { blockingPodsGate } from "./features/blockingpods/index.ts";
import { disruptionPolicyExtension } from "./features/disruption-policy/index.ts";
import { holdGate } from "./features/hold/index.ts";
import { disruptionHooksGate } from "./features/hooks/index.ts";
import { maintenanceWindowGate } from "./features/maintenance-window/index.ts";
import { inPlaceDrainGate, inPlaceExtension } from "./features/inplace/index.ts";
import { rolloutGate } from "./features/rollout/index.ts";
import { serialGate } from "./features/serial/index.ts";
import { staticPodsGate } from "./features/staticpods/index.ts";
import { unitRevertExtension, unitRevertGate } from "./features/revert/index.ts";
import type { Gate } from "./gates/gate.ts";

/** What the gates are built from: the live controller's dependencies, or what `diff` has. */
export type GateDeps = Pick<
  OscControllerDeps,
  "kube" | "host" | "clock" | "log" | "unitVerification" | "rollout" | "serialLeaseWatch" | "blockingPods"
> &
  Partial<Pick<OscControllerDeps, "events">> & {
    readonly node: { readonly hostName: string };
    readonly config: { readonly syncPeriodMs: number };
  };

/**
 * THE gate list, in the order a reconcile meets the gates (first hold wins; phases: README, "one pipeline").
 * The window, approval and blocking pods come before the serial lock and the rollout slot: a node waiting
 * for them holds nothing the pool needs. Hooks are asked only inside the window.
 */
export function oscGates(d: GateDeps): Gate[] {
  const { kube, clock, log, node, serialLeaseWatch: leaseWatch } = d;
  const disruption = { kube, syncPeriodMs: d.config.syncPeriodMs };
  return [
    holdGate(d.config),
    unitRevertGate(d),
    maintenanceWindowGate({
      clock,
      host: d.host,
      syncPeriodMs: d.config.syncPeriodMs,
      ...(d.events ? { events: d.events } : {}),
    }),
    disruptionHooksGate(disruption),
    blockingPodsGate({ ...disruption, ...(d.blockingPods !== undefined ? { watch: d.blockingPods } : {}) }),
    serialGate({ kube, clock, log, hostName: node.hostName, leaseWatch }),
    rolloutGate({ kube, clock, log, rollout: d.rollout }),
    inPlaceDrainGate(),
    staticPodsGate({ kube, hostName: node.hostName }),
  ];
}

/** The apply's extensions, each with its own slice (in-place: its commands and probes; revert: its window). */
export function oscExtensions(d: Pick<OscControllerDeps, "inPlace" | "unitVerification">): ApplyExtension[] {
  return [inPlaceExtension(d.inPlace), unitRevertExtension({ unitVerification: d.unitVerification }), disruptionPolicyExtension()];
}

/** Everything that plugs into the OSC pipeline, built once per controller. */
export const oscPlugins = (deps: OscControllerDeps): ApplyPlugins => ({ gates: oscGates(deps), extensions: oscExtensions(deps) });

export type { RolloutTimings } from "./features/rollout/index.ts";
