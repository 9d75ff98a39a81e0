import type { KubeObject } from "../../../kube/index.ts";
import type { Osc } from "../../../osc/index.ts";
import type { Systemd } from "../../../systemd/index.ts";
import type { Gate, GateHold } from "../gates/gate.ts";
import type { PlanHook } from "../plan/planner.ts";
import type { StepContext, UnitJobs } from "./context.ts";
import type { ApplyPorts } from "./ports.ts";

/** What an extension sees before the apply starts (no change set yet). */
export interface ArmContext {
  readonly ports: ApplyPorts;
  /** The OSC as the Secret holds it (before the env drop-in). */
  readonly osc: Osc;
  readonly checksum: string;
  readonly node: KubeObject | undefined;
  readonly signal: AbortSignal;
}

/** An extension armed for one apply: it may watch systemd during the apply and judge the result after it. */
export interface Armed {
  /** Replaces the apply's Systemd port (e.g. to note every restart). */
  readonly systemd?: Systemd;
  /** What the unit jobs become (the disruption policy); the first armed extension with one wins. */
  readonly unitJobs?: UnitJobs;
  /** After a complete apply: a hold instead of success (the units were reverted). */
  verify(signal: AbortSignal): Promise<GateHold | undefined>;
}

/** Hooks in the apply's order (§4 steps 20, 21, 24 for the unit-command and finish hooks); each labels its own StepError. */
export interface ApplyExtension extends PlanHook {
  readonly name: string;
  arm?(ctx: ArmContext): Promise<Armed | undefined>;
  beforeUnitCommands?(ctx: StepContext): Promise<void>;
  afterUnitCommands?(ctx: StepContext): Promise<void>;
  /** Returns a retry delay when the work must be tried again later (the apply stops without failing). */
  finish?(ctx: StepContext, osc: Osc): Promise<{ readonly retryAfterMs: number; readonly why: string } | undefined>;
}

/** The gates (only the `plan` phase runs inside the apply) and the extensions an apply runs with. */
export interface ApplyPlugins {
  readonly gates: readonly Gate[];
  readonly extensions: readonly ApplyExtension[];
}

/** Arms each extension in list order; the last Systemd wrapper wins the port, `verify` asks each armed one, first hold wins. */
export async function armAll(
  extensions: readonly ApplyExtension[],
  ctx: ArmContext,
): Promise<{ readonly ports: ApplyPorts; readonly unitJobs?: UnitJobs; verify(signal: AbortSignal): Promise<GateHold | undefined> }> {
  let ports = ctx.ports;
  let unitJobs: UnitJobs | undefined;
  const armed: Armed[] = [];
  for (const e of extensions) {
    const a = await e.arm?.({ ...ctx, ports });
    if (a === undefined) continue;
    if (a.systemd !== undefined) ports = { ...ports, systemd: a.systemd };
    unitJobs ??= a.unitJobs;
    armed.push(a);
  }
  return {
    ports,
    ...(unitJobs !== undefined ? { unitJobs } : {}),
    async verify(signal) {
      for (const a of armed) {
        const hold = await a.verify(signal);
        if (hold !== undefined) return hold;
      }
      return undefined;
    },
  };
}
