import { realClock, type Clock } from "../../../src/clock/index.ts";
import {
  SystemdCallError,
  SystemdJobError,
  type JobOperation,
  type Systemd,
  type UnitProperties,
  type UnitStatus,
} from "../../../src/systemd/types.ts";
import type { FailJobOptions, SystemdAction, SystemdActionName, SystemdFakeControls } from "./actions.ts";
import { SystemdModel, type FakeUnit, type UnitSeed } from "./model.ts";

export interface FakeSystemdOptions {
  /** Drives delayed and stalled jobs; a FakeClock lets a test step through the 10 s wait. */
  readonly clock?: Clock;
  /** How long a stalled job blocks before it counts as still running (success), like the real client. */
  readonly jobTimeoutMs?: number;
  readonly units?: readonly UnitSeed[];
}

/** A job held by `holdNextJob`: `reached` once it waits, `release()` lets it run. */
export interface JobHold {
  readonly reached: Promise<void>;
  release(): void;
}

const ACTION: Readonly<Record<JobOperation, SystemdActionName>> = { start: "Start", stop: "Stop", restart: "Restart", reload: "Reload" };

/**
 * An in-memory Systemd for fast controller tests, like upstream's `dbus/fake`: it records every call in order
 * and applies the same unit state and failure injection as the D-Bus double. Differences from systemd kept from
 * upstream's fake: listUnitsByNames returns only units the fake knows.
 */
export class FakeSystemd implements Systemd, SystemdFakeControls {
  readonly #model: SystemdModel;
  readonly #clock: Clock;
  readonly #jobTimeoutMs: number;
  readonly #holds = new Map<string, { readonly reached: () => void; readonly released: Promise<void> }>();
  closed = false;

  constructor(opts: FakeSystemdOptions = {}) {
    this.#clock = opts.clock ?? realClock;
    this.#jobTimeoutMs = opts.jobTimeoutMs ?? 10_000;
    this.#model = new SystemdModel({ clock: this.#clock, ...(opts.units ? { units: opts.units } : {}) });
  }

  get actions(): readonly SystemdAction[] {
    return this.#model.actions;
  }

  /** Current unit state by name (only units the fake has seen or was seeded with). */
  get units(): ReadonlyMap<string, Readonly<FakeUnit>> {
    return this.#model.units;
  }

  clearActions(): void {
    this.#model.clearActions();
  }
  failNextJob(unit: string, opts?: FailJobOptions): void {
    this.#model.failNextJob(unit, opts);
  }
  failJobs(unit: string, opts?: FailJobOptions): void {
    this.#model.failJobs(unit, opts);
  }
  stallJobs(unit: string, operation?: JobOperation): void {
    this.#model.stallJobs(unit, operation);
  }
  delayJobs(unit: string, ms: number): void {
    this.#model.delayJobs(unit, ms);
  }
  makeUnknown(unit: string): void {
    this.#model.makeUnknown(unit);
  }
  failAfterStart(unit: string, afterMs: number, opts?: { readonly once?: boolean }): void {
    this.#model.failAfterStart(unit, afterMs, opts);
  }
  failNextCall(action: SystemdActionName, message?: string): void {
    this.#model.failNextCall(action, message);
  }
  clearInjections(): void {
    this.#model.clearInjections();
  }

  /**
   * The next start/stop/restart job of `unit` waits, once recorded, until the test calls `release()`;
   * `reached` resolves when it started waiting. Lets a test act while an apply is in its unit commands.
   */
  holdNextJob(unit: string): JobHold {
    const reached = Promise.withResolvers<void>();
    const released = Promise.withResolvers<void>();
    this.#holds.set(unit, { reached: reached.resolve, released: released.promise });
    return { reached: reached.promise, release: () => released.resolve() };
  }

  async daemonReload(signal?: AbortSignal): Promise<void> {
    this.#enter("DaemonReload", [], signal);
    const refused = this.#model.takeCallFailure("DaemonReload");
    if (refused) throw new SystemdCallError(`systemd daemon-reload failed: ${refused.message}`);
  }

  async enable(units: readonly string[], signal?: AbortSignal): Promise<void> {
    this.#enter("Enable", units, signal);
    const refused = this.#model.setEnabled(units, true, "Enable");
    if (refused) throw new SystemdCallError(`unable to enable units ${units.join(", ")}: ${refused.message}`);
  }

  async disable(units: readonly string[], signal?: AbortSignal): Promise<void> {
    this.#enter("Disable", units, signal);
    const refused = this.#model.setEnabled(units, false, "Disable");
    if (refused) throw new SystemdCallError(`unable to disable units ${units.join(", ")}: ${refused.message}`);
  }

  start(unit: string, signal?: AbortSignal): Promise<void> {
    return this.#job("start", unit, signal);
  }
  stop(unit: string, signal?: AbortSignal): Promise<void> {
    return this.#job("stop", unit, signal);
  }
  reload(unit: string, signal?: AbortSignal): Promise<void> {
    return this.#job("reload", unit, signal);
  }
  restart(unit: string, signal?: AbortSignal): Promise<void> {
    return this.#job("restart", unit, signal);
  }

  async listUnits(signal?: AbortSignal): Promise<UnitStatus[]> {
    this.#enter("List", [], signal);
    this.#refuseIfInjected("List");
    return [...this.#model.units.keys()].map((name) => this.#model.status(name));
  }

  async listUnitsByNames(names: readonly string[], signal?: AbortSignal): Promise<UnitStatus[]> {
    this.#enter("ListByNames", names, signal);
    this.#refuseIfInjected("ListByNames");
    return names.filter((n) => this.#model.units.has(n)).map((n) => this.#model.status(n));
  }

  async unitProperties(unit: string, signal?: AbortSignal): Promise<UnitProperties> {
    this.#enter("UnitProperties", [unit], signal);
    this.#refuseIfInjected("UnitProperties");
    const u = this.#model.view(unit);
    return {
      activeState: u.activeState,
      subState: u.subState,
      loadState: u.loadState,
      unitFileState: u.unitFileState,
      stateChangeTimestampMs: u.stateChangeTimestampMs,
      invocationId: u.invocationId,
    };
  }

  async triggeredBy(unit: string, signal?: AbortSignal): Promise<string[]> {
    this.#enter("GetTriggeredBy", [unit], signal);
    this.#refuseIfInjected("GetTriggeredBy");
    return [...this.#model.view(unit).triggeredBy];
  }

  async serviceType(unit: string, signal?: AbortSignal): Promise<string> {
    this.#enter("GetServiceType", [unit], signal);
    this.#refuseIfInjected("GetServiceType");
    return this.#model.view(unit).serviceType;
  }

  close(): void {
    this.closed = true;
  }

  async #job(op: JobOperation, unit: string, signal?: AbortSignal): Promise<void> {
    this.#enter(ACTION[op], [unit], signal);
    const hold = this.#holds.get(unit);
    if (hold !== undefined) {
      this.#holds.delete(unit);
      hold.reached();
      await hold.released;
      signal?.throwIfAborted();
    }
    const plan = this.#model.planJob(op, unit, ACTION[op]);
    if (plan.kind === "refused") throw new SystemdCallError(`unable to ${op} unit ${unit}: ${plan.refusal.message}`);
    if (plan.kind === "stall") {
      // The real client gives up waiting and reports success.
      await this.#clock.sleep(this.#jobTimeoutMs, signal);
      return;
    }
    if (plan.delayMs > 0) await this.#clock.sleep(plan.delayMs, signal);
    this.#model.finishJob(op, unit, plan.result);
    if (plan.result !== "done") throw new SystemdJobError(op, unit, plan.result);
  }

  #enter(action: SystemdActionName, units: readonly string[], signal?: AbortSignal): void {
    signal?.throwIfAborted();
    this.#model.record(action, units);
  }

  #refuseIfInjected(action: SystemdActionName): void {
    const refused = this.#model.takeCallFailure(action);
    if (refused) throw new SystemdCallError(refused.message);
  }
}
