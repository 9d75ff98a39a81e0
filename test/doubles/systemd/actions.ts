import type { JobOperation, JobResult } from "../../../src/systemd/types.ts";

/** The calls upstream's fake (`dbus/fake`) records, plus the property reads our interface groups. */
export type SystemdActionName =
  | "DaemonReload"
  | "Enable"
  | "Disable"
  | "Start"
  | "Stop"
  | "Restart"
  | "Reload"
  | "List"
  | "ListByNames"
  | "UnitProperties"
  | "GetTriggeredBy"
  | "GetServiceType";

/** One recorded call, in call order: `{action: "Restart", units: ["kubelet.service"]}`. */
export interface SystemdAction {
  readonly action: SystemdActionName;
  readonly units: readonly string[];
}

export interface FailJobOptions {
  /** Result carried by JobRemoved; "failed" unless given. */
  readonly result?: Exclude<JobResult, "done">;
  /** Only jobs of this operation; any job of the unit when absent. */
  readonly operation?: JobOperation;
}

/** The failure injections and the action log both systemd doubles offer. */
export interface SystemdFakeControls {
  readonly actions: readonly SystemdAction[];
  clearActions(): void;
  /** Fails the next matching job of `unit` (one-shot); the action is still recorded. */
  failNextJob(unit: string, opts?: FailJobOptions): void;
  /** Fails every matching job of `unit` until `clearInjections`. */
  failJobs(unit: string, opts?: FailJobOptions): void;
  /** Jobs of `unit` never report a result (the D-Bus double never emits JobRemoved). */
  stallJobs(unit: string, operation?: JobOperation): void;
  /** Jobs of `unit` finish after `ms`. */
  delayJobs(unit: string, ms: number): void;
  /**
   * After each successful start/restart job of `unit`, its process "exits" after `afterMs`: the unit
   * turns failed (as a crashing service does once systemd gave up), until `clearInjections`; with
   * `once`, only after the next such job.
   */
  failAfterStart(unit: string, afterMs: number, opts?: { readonly once?: boolean }): void;
  /** The unit has no unit file: jobs, enable and disable are refused, queries answer "not-found". */
  makeUnknown(unit: string): void;
  /** The next call of `action` is refused by the manager (the job is never submitted). */
  failNextCall(action: SystemdActionName, message?: string): void;
  clearInjections(): void;
}
