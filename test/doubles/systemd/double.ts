import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realClock, type Clock } from "../../../src/clock/index.ts";
import type { JobOperation } from "../../../src/systemd/types.ts";
import type { FailJobOptions, SystemdAction, SystemdActionName, SystemdFakeControls } from "./actions.ts";
import { startDbusDaemon, type DbusDaemon } from "./dbus-daemon.ts";
import { ManagerService, type DbusCall } from "./manager-service.ts";
import { SystemdModel, type FakeUnit, type UnitSeed } from "./model.ts";

export interface SystemdDoubleOptions {
  /** Where dbus-daemon listens; a fresh temp dir when absent. */
  readonly socketPath?: string;
  readonly clock?: Clock;
  readonly units?: readonly UnitSeed[];
  /** Emit JobRemoved before the reply to StartUnit/StopUnit/RestartUnit (default: after, like systemd). */
  readonly jobRemovedBeforeReply?: boolean;
  readonly onAction?: (action: SystemdAction) => void;
}

/** A real dbus-daemon with a fake org.freedesktop.systemd1 Manager on it. */
export interface SystemdDouble extends SystemdFakeControls {
  /** Pass to createDbusSystemd({address}) or as DBUS_SYSTEM_BUS_ADDRESS. */
  readonly address: string;
  readonly socketPath: string;
  /** Every D-Bus call the manager received, in order, with its decoded arguments. */
  readonly calls: readonly DbusCall[];
  readonly units: ReadonlyMap<string, Readonly<FakeUnit>>;
  /** Jobs whose JobRemoved is held back by stallJobs. */
  readonly stalledJobs: number;
  /** Emits JobRemoved for held-back jobs. */
  finishStalledJobs(result?: string): void;
  clearCalls(): void;
  /** Calls of this D-Bus member (e.g. "Reload") are recorded but never answered, until clearInjections. */
  leaveUnanswered(member: string): void;
  /** Kills dbus-daemon (clients lose their connection); startBus brings a new one up on the same socket. */
  stopBus(): Promise<void>;
  startBus(): Promise<void>;
  restartBus(): Promise<void>;
  stop(): Promise<void>;
}

export async function startSystemdDouble(opts: SystemdDoubleOptions = {}): Promise<SystemdDouble> {
  const dir = mkdtempSync(join(tmpdir(), "systemd-double-"));
  const socketPath = opts.socketPath ?? join(dir, "system_bus_socket");
  const model = new SystemdModel({
    clock: opts.clock ?? realClock,
    ...(opts.units ? { units: opts.units } : {}),
    ...(opts.onAction ? { onAction: opts.onAction } : {}),
  });
  const service = new ManagerService({ model, jobRemovedBeforeReply: opts.jobRemovedBeforeReply ?? false });
  let daemon: DbusDaemon | undefined;

  const startBus = async () => {
    if (daemon) return;
    const d = await startDbusDaemon(socketPath, dir);
    try {
      await service.attach(d.address);
    } catch (err) {
      await d.stop();
      throw err;
    }
    daemon = d;
  };
  const stopBus = async () => {
    service.detach();
    const d = daemon;
    daemon = undefined;
    await d?.stop();
  };

  try {
    await startBus();
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  // The guid changes with every daemon; clients only need the socket.
  const address = `unix:path=${socketPath}`;

  return {
    address,
    socketPath,
    get actions() {
      return model.actions;
    },
    get calls() {
      return service.calls;
    },
    get units() {
      return model.units;
    },
    get stalledJobs() {
      return service.stalled.length;
    },
    clearActions: () => model.clearActions(),
    clearCalls: () => void service.calls.splice(0),
    failNextJob: (unit: string, o?: FailJobOptions) => model.failNextJob(unit, o),
    failJobs: (unit: string, o?: FailJobOptions) => model.failJobs(unit, o),
    stallJobs: (unit: string, operation?: JobOperation) => model.stallJobs(unit, operation),
    delayJobs: (unit: string, ms: number) => model.delayJobs(unit, ms),
    makeUnknown: (unit: string) => model.makeUnknown(unit),
    failAfterStart: (unit: string, afterMs: number, o?: { readonly once?: boolean }) => model.failAfterStart(unit, afterMs, o),
    failNextCall: (action: SystemdActionName, message?: string) => model.failNextCall(action, message),
    leaveUnanswered: (member: string) => void service.unanswered.add(member),
    clearInjections: () => {
      model.clearInjections();
      service.unanswered.clear();
    },
    finishStalledJobs: (result?: string) => service.finishStalled(result),
    stopBus,
    startBus,
    restartBus: async () => {
      await stopBus();
      await startBus();
    },
    stop: async () => {
      await stopBus();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
