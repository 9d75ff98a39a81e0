import type { Clock } from "../../../../clock/index.ts";
import type { HostFs } from "../../../../host/index.ts";
import type { KubeObject, Predicate } from "../../../../kube/index.ts";
import { type EventRecorder, nodeRef } from "../../../events.ts";
import type { Decision, Gate, GateContext } from "../../gates/gate.ts";
import { readChanges } from "../../plan/state.ts";
import { checksumPrefix } from "../../plan/summary.ts";
import { nextOpening, openingText, parseMaintenanceWindows, type MaintenanceWindow } from "./window.ts";

/** Node annotation (a pool annotation arrives as one): when disruptive applies may run. */
const maintenanceWindowAnnotation = "node-agent.gardener.cloud/maintenance-window";

const annotationOf = (node: KubeObject | undefined): string | undefined => {
  const v = node?.metadata.annotations?.[maintenanceWindowAnnotation]?.trim();
  return v === undefined || v === "" ? undefined : v;
};

type Windows =
  | { readonly kind: "none" }
  | { readonly kind: "bad"; readonly error: string }
  | { readonly kind: "ok"; readonly windows: MaintenanceWindow[] };

function windowsOf(node: KubeObject | undefined): Windows {
  const value = annotationOf(node);
  if (value === undefined) return { kind: "none" };
  try {
    return { kind: "ok", windows: parseMaintenanceWindows(value) };
  } catch (err) {
    return { kind: "bad", error: `annotation ${maintenanceWindowAnnotation}: ${(err as Error).message}` };
  }
}

export interface MaintenanceWindowDeps {
  readonly clock: Clock;
  readonly host: HostFs;
  /** Upper bound of the wait before looking again (clock steps, suspend); 0: the opening itself. */
  readonly syncPeriodMs: number;
  /** The live run's Warning for an unreadable annotation (absent for `diff`). */
  readonly events?: EventRecorder;
}

/**
 * The maintenance window (issue 26), an admit gate before the serial lock and the rollout slot (neither is
 * taken while a node waits): outside every window a disruptive apply waits for the next opening; an apply
 * that disturbs nothing, or one of this version that already started, goes on. A bootstrapping node and an
 * unreadable annotation are not held (never blocked for ever).
 */
export function maintenanceWindowGate(d: MaintenanceWindowDeps): Gate {
  let warned: string | undefined;
  const decide = async (ctx: GateContext): Promise<Decision> => {
    const w = windowsOf(ctx.node);
    if (w.kind === "none" || !ctx.nodeKnownAtStart) return { kind: "proceed" };
    if (w.kind === "bad") {
      const why = `${w.error}; the node applies as if no window were set`;
      return ctx.dryRun ? { kind: "unknown", why } : { kind: "proceed" };
    }
    const now = d.clock.now();
    const next = nextOpening(w.windows, now);
    if (next === undefined || next.atMs <= now) return { kind: "proceed" };
    // An apply of this version started inside a window (its change set is on disk): it finishes.
    if ((await readChanges(d.host))?.operatingSystemConfigChecksum === ctx.checksum) return { kind: "proceed" };
    const assessed = await ctx.disruption();
    if (!assessed.disruptive) return { kind: "proceed" };
    const ignored = assessed.policyIgnored !== undefined ? `; disruption policy ignored: ${assessed.policyIgnored}` : "";
    const wait = next.atMs - now;
    return {
      kind: "hold",
      hold: {
        reason: "WaitingForMaintenanceWindow",
        message: `Waiting for the maintenance window (${maintenanceWindowAnnotation}: ${w.windows.map((x) => x.text).join(", ")}), next opening ${openingText(next.window, next.atMs)}; operating system config ${checksumPrefix(ctx.checksum)} ${assessed.text}${ignored}`,
        requeueAfterMs: d.syncPeriodMs > 0 ? Math.min(wait, d.syncPeriodMs) : wait,
      },
    };
  };
  return {
    name: "maintenance-window",
    phase: "admit",
    online: true,
    decide,
    async reserve(ctx) {
      const w = windowsOf(ctx.node);
      if (w.kind === "bad" && ctx.node !== undefined && d.events !== undefined) {
        const key = `${ctx.checksum}/${annotationOf(ctx.node)}`;
        if (warned !== key) {
          warned = key;
          const message = `${w.error}; the node applies as if no window were set`;
          await d.events.event(nodeRef(ctx.node), "Warning", "InvalidMaintenanceWindow", "Reconcile", message);
        }
      }
      const decided = await decide(ctx);
      return decided.kind === "hold" ? { kind: "hold", hold: decided.hold } : { kind: "reserved" };
    },
  };
}

/** Node events that matter: the window annotation set, changed or removed (a wait then ends at once). */
export const maintenanceWindowPredicate: Predicate<KubeObject> = {
  create: () => false,
  update: (oldObj, newObj) => annotationOf(oldObj) !== annotationOf(newObj),
  delete: () => false,
  generic: () => false,
};
