import { realClock, type Clock } from "../clock/index.ts";
import type { Logger } from "../log/index.ts";
// dbus-connection.ts pulls in dbus-next (and node:net): loaded on the first call, so start-up and
// commands that never reach systemd do not pay for it.
import type { BusCall, BusConnection, BusConnectionOptions, BusSignal, Connected } from "./dbus-connection.ts";
import {
  decodeJobRemoved,
  decodeObjectPath,
  decodeStringArrayProperty,
  decodeStringProperty,
  decodeUnitList,
  decodeUnitProperties,
} from "./dbus-decode.ts";
import { JobTracker, type JobOutcome } from "./job-tracker.ts";
import { SystemdCallError, SystemdJobError, type JobOperation, type Systemd, type UnitProperties, type UnitStatus } from "./types.ts";
import { errorText } from "../log/index.ts";

/** Upstream waits this long for a job's JobRemoved before it carries on as if the job succeeded. */
export const DEFAULT_JOB_TIMEOUT_MS = 10_000;
/** libdbus's default reply timeout. */
const DEFAULT_CALL_TIMEOUT_MS = 25_000;
const DEFAULT_SYSTEM_BUS_ADDRESS = "unix:path=/run/dbus/system_bus_socket";

const SYSTEMD = "org.freedesktop.systemd1";
const MANAGER_PATH = "/org/freedesktop/systemd1";
const MANAGER = "org.freedesktop.systemd1.Manager";
const UNIT = "org.freedesktop.systemd1.Unit";
const SERVICE = "org.freedesktop.systemd1.Service";
const PROPERTIES = "org.freedesktop.DBus.Properties";
const JOB_REMOVED_MATCH = `type='signal',sender='${SYSTEMD}',path='${MANAGER_PATH}',interface='${MANAGER}',member='JobRemoved'`;

export interface DbusSystemdOptions {
  /** D-Bus address of the system bus; the CLI passes DBUS_SYSTEM_BUS_ADDRESS when set. */
  readonly address?: string;
  readonly log: Logger;
  readonly jobTimeoutMs?: number;
  readonly callTimeoutMs?: number;
  /** Times the wait for a job's result. */
  readonly clock?: Clock;
}

const JOB_METHOD: Readonly<Record<JobOperation, string>> = {
  start: "StartUnit",
  stop: "StopUnit",
  restart: "RestartUnit",
  reload: "ReloadUnit",
};

/**
 * systemd's Manager over one persistent system-bus connection, opened on first use and reopened after the bus
 * went away. Nothing is connected, and the D-Bus library is not even loaded, until the first call.
 */
export async function createDbusSystemd(opts: DbusSystemdOptions): Promise<Systemd> {
  return new DbusSystemd(opts);
}

class DbusSystemd implements Systemd {
  readonly #busOptions: BusConnectionOptions;
  #bus: Promise<BusConnection> | undefined;
  #closed = false;
  readonly #jobs: JobTracker;
  readonly #log: Logger;
  readonly #jobTimeoutMs: number;

  constructor(opts: DbusSystemdOptions) {
    this.#log = opts.log;
    this.#jobs = new JobTracker(opts.clock ?? realClock);
    this.#jobTimeoutMs = opts.jobTimeoutMs ?? DEFAULT_JOB_TIMEOUT_MS;
    this.#busOptions = {
      address: opts.address ?? DEFAULT_SYSTEM_BUS_ADDRESS,
      log: opts.log,
      callTimeoutMs: opts.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
      onConnect: subscribe,
      signalMatch: JOB_REMOVED_MATCH,
      onSignal: (s) => this.#onSignal(s),
    };
  }

  /** The connection object, created once; a close() that came first closes it at once (calls then fail). */
  #connection(): Promise<BusConnection> {
    this.#bus ??= import("./dbus-connection.ts").then(({ BusConnection: Connection }) => {
      const bus = new Connection(this.#busOptions);
      if (this.#closed) bus.close();
      return bus;
    });
    return this.#bus;
  }

  async daemonReload(signal?: AbortSignal): Promise<void> {
    await this.#call(manager("Reload"), signal, (e) => `systemd daemon-reload failed: ${e}`);
  }

  async enable(units: readonly string[], signal?: AbortSignal): Promise<void> {
    const req = manager("EnableUnitFiles", "asbb", [[...units], false, true]);
    await this.#call(req, signal, (e) => `unable to enable units ${units.join(", ")}: ${e}`);
  }

  async disable(units: readonly string[], signal?: AbortSignal): Promise<void> {
    const req = manager("DisableUnitFiles", "asb", [[...units], false]);
    await this.#call(req, signal, (e) => `unable to disable units ${units.join(", ")}: ${e}`);
  }

  start(unit: string, signal?: AbortSignal): Promise<void> {
    return this.#job("start", unit, signal);
  }

  stop(unit: string, signal?: AbortSignal): Promise<void> {
    return this.#job("stop", unit, signal);
  }

  restart(unit: string, signal?: AbortSignal): Promise<void> {
    return this.#job("restart", unit, signal);
  }

  reload(unit: string, signal?: AbortSignal): Promise<void> {
    return this.#job("reload", unit, signal);
  }

  async listUnits(signal?: AbortSignal): Promise<UnitStatus[]> {
    const body = await this.#call(manager("ListUnits"), signal, (e) => `unable to list units: ${e}`);
    return decodeUnitList(body);
  }

  async listUnitsByNames(names: readonly string[], signal?: AbortSignal): Promise<UnitStatus[]> {
    const req = manager("ListUnitsByNames", "as", [[...names]]);
    const body = await this.#call(req, signal, (e) => `unable to list units ${names.join(", ")}: ${e}`);
    return decodeUnitList(body);
  }

  async unitProperties(unit: string, signal?: AbortSignal): Promise<UnitProperties> {
    const fail = (e: string) => `unable to read properties of unit ${unit}: ${e}`;
    const path = await this.#unitPath(unit, signal, fail);
    const body = await this.#call(properties(path, "GetAll", "s", [UNIT]), signal, fail);
    return decodeUnitProperties(body);
  }

  async triggeredBy(unit: string, signal?: AbortSignal): Promise<string[]> {
    const fail = (e: string) => `unable to read TriggeredBy of unit ${unit}: ${e}`;
    const path = await this.#unitPath(unit, signal, fail);
    const body = await this.#call(properties(path, "Get", "ss", [UNIT, "TriggeredBy"]), signal, fail);
    return decodeStringArrayProperty(body, "TriggeredBy");
  }

  async serviceType(unit: string, signal?: AbortSignal): Promise<string> {
    const fail = (e: string) => `unable to read service type of unit ${unit}: ${e}`;
    const path = await this.#unitPath(unit, signal, fail);
    const body = await this.#call(properties(path, "Get", "ss", [SERVICE, "Type"]), signal, fail);
    return decodeStringProperty(body, "Type");
  }

  close(): void {
    this.#closed = true;
    // A connection still being created is closed by #connection once it exists; if loading the
    // library failed there is nothing to close (the calls that waited for it got the error).
    void this.#bus?.then(
      (bus) => bus.close(),
      () => undefined,
    );
  }

  /** LoadUnit (not GetUnit) so that a unit systemd has not loaded yet still answers, as `systemctl show` does. */
  async #unitPath(unit: string, signal: AbortSignal | undefined, fail: (e: string) => string): Promise<string> {
    const body = await this.#call(manager("LoadUnit", "s", [unit]), signal, fail);
    return decodeObjectPath(body, "LoadUnit reply");
  }

  async #job(op: JobOperation, unit: string, signal?: AbortSignal): Promise<void> {
    const outcome = await this.#submitAndWait(op, unit, signal);
    if (outcome.kind === "still-running") {
      // Upstream semantics: a job still queued or running after the wait is not an error.
      this.#log.info("Systemd operation is blocking for more than 10s, aborting and continuing anyways", {
        unitName: unit,
        operation: op,
      });
      return;
    }
    if (outcome.result !== "done") throw new SystemdJobError(op, unit, outcome.result);
  }

  /**
   * Submits the job and waits for its JobRemoved. The match for JobRemoved is held only meanwhile: on a bus
   * that other clients use too, an agent with no job pending is not sent their jobs' signals.
   */
  async #submitAndWait(op: JobOperation, unit: string, signal?: AbortSignal): Promise<JobOutcome> {
    let release: () => void;
    try {
      release = (await this.#connection()).holdSignals();
    } catch (err) {
      throw new SystemdCallError(`unable to ${op} unit ${unit}: ${errorText(err)}`, { cause: err });
    }
    try {
      const body = await this.#call(manager(JOB_METHOD[op], "ss", [unit, "replace"]), signal, (e) => {
        return `unable to ${op} unit ${unit}: ${e}`;
      });
      const jobPath = decodeObjectPath(body, `${JOB_METHOD[op]} reply`);
      return await this.#jobs.wait(jobPath, this.#jobTimeoutMs, signal);
    } finally {
      release();
    }
  }

  /** One call; bus and systemd errors become SystemdCallError with `describe(text)`, an abort rethrows the reason. */
  async #call(req: BusCall, signal: AbortSignal | undefined, describe: (e: string) => string): Promise<unknown[]> {
    try {
      return await (await this.#connection()).call(req, signal);
    } catch (err) {
      if (signal?.aborted && err === signal.reason) throw err;
      throw new SystemdCallError(describe(errorText(err)), { cause: err });
    }
  }

  #onSignal(s: BusSignal): void {
    if (s.iface !== MANAGER || s.member !== "JobRemoved" || s.path !== MANAGER_PATH) return;
    const removed = decodeJobRemoved(s.body);
    if (removed) this.#jobs.removed(removed.jobPath, removed.result);
  }
}

/** systemd sends JobRemoved only while some client is subscribed; the match rule (held per job) routes it to us. */
async function subscribe(conn: Connected): Promise<void> {
  await conn.call(manager("Subscribe"));
}

function manager(member: string, signature?: string, body?: readonly unknown[]): BusCall {
  return {
    destination: SYSTEMD,
    path: MANAGER_PATH,
    iface: MANAGER,
    member,
    ...(signature ? { signature } : {}),
    ...(body ? { body } : {}),
  };
}

function properties(path: string, member: string, signature: string, body: readonly unknown[]): BusCall {
  return { destination: SYSTEMD, path, iface: PROPERTIES, member, signature, body };
}
