/** Result strings of a systemd job, as carried by the Manager's JobRemoved signal. */
export type JobResult = "done" | "canceled" | "timeout" | "failed" | "dependency" | "skipped" | "invalid";

export interface UnitStatus {
  readonly name: string;
  readonly description: string;
  readonly loadState: string;
  readonly activeState: string;
  readonly subState: string;
}

export interface UnitProperties {
  readonly activeState: string;
  readonly subState: string;
  readonly loadState: string;
  readonly unitFileState: string;
  /** Wall-clock ms of the last state change, 0 when never changed. */
  readonly stateChangeTimestampMs: number;
  readonly invocationId: string;
}

/**
 * The systemd manager, one verb per systemctl command. No Kubernetes types cross this boundary:
 * the controller that asked records any event.
 * start/stop/restart submit a job in mode "replace" and resolve when it finishes with "done";
 * another result rejects with SystemdJobError; after 10 s without an answer they resolve anyway
 * (upstream semantics: the job is still running, which is not an error).
 */
export interface Systemd {
  /** systemctl daemon-reload */
  daemonReload(signal?: AbortSignal): Promise<void>;
  /** systemctl enable --force --no-reload <units> */
  enable(units: readonly string[], signal?: AbortSignal): Promise<void>;
  /** systemctl disable --no-reload <units> */
  disable(units: readonly string[], signal?: AbortSignal): Promise<void>;
  /** systemctl start --job-mode=replace <unit> */
  start(unit: string, signal?: AbortSignal): Promise<void>;
  /** systemctl stop --job-mode=replace <unit> */
  stop(unit: string, signal?: AbortSignal): Promise<void>;
  /** systemctl restart --job-mode=replace <unit> */
  restart(unit: string, signal?: AbortSignal): Promise<void>;
  /**
   * systemctl reload --job-mode=replace <unit> (ReloadUnit): the unit's ExecReload, same process. systemd refuses it
   * for a unit without ExecReload (JobTypeNotApplicable) and ends it "invalid" for a unit that is not active.
   */
  reload(unit: string, signal?: AbortSignal): Promise<void>;
  /** systemctl list-units --all */
  listUnits(signal?: AbortSignal): Promise<UnitStatus[]>;
  /** systemctl show -p Id,LoadState,ActiveState,SubState <names> */
  listUnitsByNames(names: readonly string[], signal?: AbortSignal): Promise<UnitStatus[]>;
  /** systemctl show -p ActiveState,SubState,LoadState,UnitFileState,StateChangeTimestamp,InvocationID <unit> */
  unitProperties(unit: string, signal?: AbortSignal): Promise<UnitProperties>;
  /** systemctl show -P TriggeredBy <unit> */
  triggeredBy(unit: string, signal?: AbortSignal): Promise<string[]>;
  /** systemctl show -P Type <unit> (services only) */
  serviceType(unit: string, signal?: AbortSignal): Promise<string>;
  close(): void;
}

export type JobOperation = "start" | "stop" | "restart" | "reload";

/** A job finished with a result other than "done". */
export class SystemdJobError extends Error {
  override readonly name = "SystemdJobError";
  constructor(
    readonly operation: JobOperation,
    readonly unit: string,
    readonly result: string,
  ) {
    super(`${operation} failed for ${unit}, due ${result}`);
  }
}

/** The manager refused a call (job not submitted, bus error). */
export class SystemdCallError extends Error {
  override readonly name = "SystemdCallError";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}
