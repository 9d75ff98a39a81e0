import { formatDuration } from "../../config/index.ts";
import type { UnitStatus } from "../../systemd/index.ts";
import type { ManagedUnit } from "./managed-units.ts";

/** What one unit contributes to the condition. */
export type UnitVerdict =
  | { readonly kind: "ok" }
  | { readonly kind: "unhealthy"; readonly message: string }
  | { readonly kind: "progressing"; readonly message: string };

/** The extra systemd facts some states need; asked lazily, only for the units that need them. */
export interface UnitFacts {
  /** Wall-clock ms of the unit's last state change (StateChangeTimestamp). */
  stateChangeMs(unit: string): Promise<number>;
  /** The Service.Type property; only asked for `.service` units. */
  serviceType(unit: string): Promise<string>;
  /** Units (timers, paths) that trigger this one. */
  triggeredBy(unit: string): Promise<readonly string[]>;
}

export interface VerdictContext {
  readonly facts: UnitFacts;
  readonly nowMs: number;
  readonly stuckThresholdMs: number;
}

const ok: UnitVerdict = { kind: "ok" };
const unhealthy = (message: string): UnitVerdict => ({ kind: "unhealthy", message });

/** Go's `d.Truncate(time.Second).String()` for a non-negative age. */
const ageText = (ms: number): string => formatDuration(Math.max(0, Math.floor(ms / 1000) * 1000));

/** "Inactive (dead)" is the steady state of oneshot services and of services a timer or path starts. */
async function deadIsNormal(name: string, facts: UnitFacts): Promise<boolean> {
  // Service.Type exists only on services; asking another unit kind fails (upstream defect, not copied).
  if (name.endsWith(".service") && (await facts.serviceType(name)) === "oneshot") return true;
  return (await facts.triggeredBy(name)).length > 0;
}

/**
 * The state table of controllers.md §10 step 4 for one unit. `status` is undefined when
 * ListUnitsByNames did not return the unit. Errors of the fact queries propagate.
 */
export async function unitVerdict(unit: ManagedUnit, status: UnitStatus | undefined, ctx: VerdictContext): Promise<UnitVerdict> {
  const { name, enabled } = unit;
  if (status === undefined) return enabled ? unhealthy(`${name}: not loaded`) : ok;
  const state = status.activeState;
  switch (state) {
    case "active":
      return enabled ? ok : unhealthy(`${name}: active but should be disabled`);
    case "failed":
      return enabled ? unhealthy(`${name}: failed`) : ok;
    case "activating":
    case "deactivating": {
      // Restart=always services pass through "activating (auto-restart)" between runs: normal operation.
      if (status.subState === "auto-restart") return ok;
      const age = ctx.nowMs - (await ctx.facts.stateChangeMs(name));
      if (age >= ctx.stuckThresholdMs) return unhealthy(`${name}: stuck in ${state} for ${ageText(age)}`);
      return { kind: "progressing", message: `${name}: ${state} for ${ageText(age)}` };
    }
    case "inactive":
      if (!enabled) return ok;
      if (status.subState === "dead" && (await deadIsNormal(name, ctx.facts))) return ok;
      return unhealthy(`${name}: inactive but should be enabled`);
    default:
      return ok; // reloading, maintenance, …: not judged
  }
}
