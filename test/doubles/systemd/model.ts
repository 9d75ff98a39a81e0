import type { Clock } from "../../../src/clock/index.ts";
import type { JobOperation, UnitStatus } from "../../../src/systemd/types.ts";
import type { FailJobOptions, SystemdAction, SystemdActionName } from "./actions.ts";

/** Everything the doubles know about one unit. Timestamps are wall-clock ms (0 = never). */
export interface FakeUnit {
  readonly name: string;
  description: string;
  loadState: string;
  activeState: string;
  subState: string;
  unitFileState: string;
  stateChangeTimestampMs: number;
  activeEnterTimestampMs: number;
  /** 32 hex digits, new on every (re)start; "" before the first one. */
  invocationId: string;
  triggeredBy: string[];
  serviceType: string;
  /** The unit has an ExecReload (systemd's unit_can_reload); ReloadUnit is refused without one. */
  canReload: boolean;
}

export type UnitSeed = Partial<FakeUnit> & { readonly name: string };

/** The manager refused a call; the D-Bus double sends it as a D-Bus error, the in-memory fake throws. */
export interface CallRefusal {
  readonly errorName: string;
  readonly message: string;
}

export type JobPlan =
  | { readonly kind: "refused"; readonly refusal: CallRefusal }
  | { readonly kind: "stall" }
  | { readonly kind: "run"; readonly result: string; readonly delayMs: number };

interface JobFailure {
  readonly result: string;
  readonly operation: JobOperation | undefined;
  readonly once: boolean;
}

export interface SystemdModelOptions {
  readonly clock: Clock;
  readonly units?: readonly UnitSeed[];
  /** Sees every recorded action as it happens. */
  readonly onAction?: (action: SystemdAction) => void;
}

/**
 * Unit state, action log and failure injection shared by both systemd doubles. Any unit name is accepted as if
 * its unit file existed, unless `makeUnknown` said otherwise.
 */
export class SystemdModel {
  readonly actions: SystemdAction[] = [];
  readonly units = new Map<string, FakeUnit>();
  readonly #unknown = new Set<string>();
  #failures = new Map<string, JobFailure[]>();
  #stalls = new Map<string, JobOperation | undefined>();
  #delays = new Map<string, number>();
  #callFailures = new Map<SystemdActionName, string>();
  #failAfterStart = new Map<string, { readonly afterMs: number; readonly once: boolean }>();
  #crashTimers = new Set<ReturnType<typeof setTimeout>>();

  constructor(private readonly opts: SystemdModelOptions) {
    for (const seed of opts.units ?? []) this.units.set(seed.name, { ...this.#fresh(seed.name), ...seed });
  }

  record(action: SystemdActionName, units: readonly string[]): void {
    const entry: SystemdAction = { action, units: [...units] };
    this.actions.push(entry);
    this.opts.onAction?.(entry);
  }

  clearActions(): void {
    this.actions.length = 0;
  }

  failNextJob(unit: string, opts?: FailJobOptions): void {
    this.#addFailure(unit, opts, true);
  }

  failJobs(unit: string, opts?: FailJobOptions): void {
    this.#addFailure(unit, opts, false);
  }

  stallJobs(unit: string, operation?: JobOperation): void {
    this.#stalls.set(unit, operation);
  }

  delayJobs(unit: string, ms: number): void {
    this.#delays.set(unit, ms);
  }

  failAfterStart(unit: string, afterMs: number, opts: { readonly once?: boolean } = {}): void {
    this.#failAfterStart.set(unit, { afterMs, once: opts.once ?? false });
  }

  makeUnknown(unit: string): void {
    this.#unknown.add(unit);
    this.units.delete(unit);
  }

  failNextCall(action: SystemdActionName, message = `injected failure of ${action}`): void {
    this.#callFailures.set(action, message);
  }

  clearInjections(): void {
    this.#failures.clear();
    this.#stalls.clear();
    this.#delays.clear();
    this.#callFailures.clear();
    this.#failAfterStart.clear();
    for (const t of this.#crashTimers) clearTimeout(t);
    this.#crashTimers.clear();
  }

  /** A one-shot refusal injected for `action`, consumed by this call. */
  takeCallFailure(action: SystemdActionName): CallRefusal | undefined {
    const message = this.#callFailures.get(action);
    if (message === undefined) return undefined;
    this.#callFailures.delete(action);
    return { errorName: "org.freedesktop.DBus.Error.Failed", message };
  }

  /** Decides how a submitted job ends; consumes one-shot failures. */
  planJob(op: JobOperation, unit: string, action: SystemdActionName): JobPlan {
    const refused = this.takeCallFailure(action);
    if (refused) return { kind: "refused", refusal: refused };
    if (!this.#known(unit)) {
      const message = op === "start" || op === "reload" ? `Unit ${unit} not found.` : `Unit ${unit} not loaded.`;
      return { kind: "refused", refusal: { errorName: "org.freedesktop.systemd1.NoSuchUnit", message } };
    }
    if (op === "reload" && !this.view(unit).canReload) {
      const message = `Job type reload is not applicable for unit ${unit}.`;
      return { kind: "refused", refusal: { errorName: "org.freedesktop.systemd1.JobTypeNotApplicable", message } };
    }
    if (this.#stalls.has(unit) && (this.#stalls.get(unit) ?? op) === op) return { kind: "stall" };
    const failures = this.#failures.get(unit) ?? [];
    const i = failures.findIndex((f) => (f.operation ?? op) === op);
    let result = "done";
    if (i >= 0) {
      const f = failures[i]!;
      result = f.result;
      if (f.once) failures.splice(i, 1);
    }
    // systemd runs a reload only on an active unit; on any other the job ends "invalid" (unit_reload: ENOEXEC).
    if (op === "reload" && result === "done" && this.view(unit).activeState !== "active") result = "invalid";
    return { kind: "run", result, delayMs: this.#delays.get(unit) ?? 0 };
  }

  /** Applies a finished job to the unit's state. */
  finishJob(op: JobOperation, unit: string, result: string): void {
    const u = this.#unit(unit);
    const now = this.opts.clock.now();
    if (op === "reload") {
      // Same process and invocation; a failed ExecReload leaves the unit running. Passing through
      // "reloading" moves StateChangeTimestamp, not ActiveEnterTimestamp.
      if (result === "done") u.stateChangeTimestampMs = now;
      return;
    }
    if (result !== "done") {
      if (op !== "stop") this.#set(u, "failed", "failed", now, newInvocationId());
      return;
    }
    if (op === "stop") {
      if (u.activeState !== "inactive") this.#set(u, "inactive", "dead", now, u.invocationId);
      return;
    }
    if (op === "start" && u.activeState === "active") return;
    const [active, sub] = runningState(u);
    const invocation = newInvocationId();
    this.#set(u, active, sub, now, invocation);
    u.activeEnterTimestampMs = now;
    const crash = this.#failAfterStart.get(unit);
    if (crash !== undefined) {
      if (crash.once) this.#failAfterStart.delete(unit);
      const timer = setTimeout(() => {
        this.#crashTimers.delete(timer);
        // Only the invocation this job started crashes; a later restart starts a new one.
        if (u.invocationId === invocation && u.activeState === "active")
          this.#set(u, "failed", "failed", this.opts.clock.now(), invocation);
      }, crash.afterMs);
      this.#crashTimers.add(timer);
    }
  }

  /** EnableUnitFiles / DisableUnitFiles; a refusal when a unit file is missing. */
  setEnabled(units: readonly string[], enabled: boolean, action: SystemdActionName): CallRefusal | undefined {
    const refused = this.takeCallFailure(action);
    if (refused) return refused;
    const missing = units.find((u) => !this.#known(u));
    if (missing !== undefined) {
      return { errorName: "org.freedesktop.DBus.Error.FileNotFound", message: `Unit file ${missing} does not exist.` };
    }
    for (const name of units) this.#unit(name).unitFileState = enabled ? "enabled" : "disabled";
    return undefined;
  }

  /** Like systemd: a status for every name, "not-found" for units without a file. */
  status(name: string): UnitStatus {
    const u = this.units.get(name) ?? this.#notFound(name);
    return {
      name: u.name,
      description: u.description,
      loadState: u.loadState,
      activeState: u.activeState,
      subState: u.subState,
    };
  }

  /** The unit as systemd would show it, "not-found" defaults for units it does not know. */
  view(name: string): FakeUnit {
    return this.units.get(name) ?? this.#notFound(name);
  }

  #known(unit: string): boolean {
    return !this.#unknown.has(unit);
  }

  #unit(name: string): FakeUnit {
    let u = this.units.get(name);
    if (!u) {
      u = this.#fresh(name);
      this.units.set(name, u);
    }
    return u;
  }

  #fresh(name: string): FakeUnit {
    return {
      name,
      description: name,
      loadState: "loaded",
      activeState: "inactive",
      subState: "dead",
      unitFileState: "disabled",
      stateChangeTimestampMs: 0,
      activeEnterTimestampMs: 0,
      invocationId: "",
      triggeredBy: [],
      serviceType: "simple",
      canReload: true,
    };
  }

  #notFound(name: string): FakeUnit {
    return { ...this.#fresh(name), loadState: "not-found", unitFileState: "" };
  }

  #set(u: FakeUnit, active: string, sub: string, now: number, invocationId: string): void {
    u.activeState = active;
    u.subState = sub;
    u.stateChangeTimestampMs = now;
    u.invocationId = invocationId;
  }

  #addFailure(unit: string, opts: FailJobOptions | undefined, once: boolean): void {
    const list = this.#failures.get(unit) ?? [];
    list.push({ result: opts?.result ?? "failed", operation: opts?.operation, once });
    this.#failures.set(unit, list);
  }
}

function runningState(u: FakeUnit): [string, string] {
  if (u.name.endsWith(".timer")) return ["active", "waiting"];
  if (u.serviceType === "oneshot") return ["inactive", "dead"];
  return ["active", "running"];
}

function newInvocationId(): string {
  return crypto.randomUUID().replaceAll("-", "");
}
