import { Message, MessageType, NameFlag, RequestNameReply, sessionBus, Variant, type MessageBus } from "dbus-next";
import type { JobOperation } from "../../../src/systemd/types.ts";
import type { SystemdActionName } from "./actions.ts";
import type { CallRefusal, SystemdModel } from "./model.ts";
import { unitNameFromPath, unitPath } from "./object-path.ts";

const SYSTEMD = "org.freedesktop.systemd1";
const MANAGER_PATH = "/org/freedesktop/systemd1";
const MANAGER = "org.freedesktop.systemd1.Manager";
const UNIT = "org.freedesktop.systemd1.Unit";
const SERVICE = "org.freedesktop.systemd1.Service";
const PROPERTIES = "org.freedesktop.DBus.Properties";
const INVALID_ARGS = "org.freedesktop.DBus.Error.InvalidArgs";

/** One method call as it reached the fake manager, arguments as decoded by dbus-next. */
export interface DbusCall {
  readonly path: string;
  readonly interface: string;
  readonly member: string;
  readonly args: readonly unknown[];
}

export interface ManagerServiceOptions {
  readonly model: SystemdModel;
  /** Send JobRemoved before the reply that names the job, as a very fast job on a busy bus can. */
  readonly jobRemovedBeforeReply: boolean;
  readonly onCall?: (call: DbusCall) => void;
}

interface StalledJob {
  readonly id: number;
  readonly path: string;
  readonly op: JobOperation;
  readonly unit: string;
}

const JOB_ACTION: Readonly<Record<string, [JobOperation, SystemdActionName]>> = {
  StartUnit: ["start", "Start"],
  StopUnit: ["stop", "Stop"],
  RestartUnit: ["restart", "Restart"],
  ReloadUnit: ["reload", "Reload"],
};

class CallError extends Error {
  constructor(
    readonly errorName: string,
    message: string,
  ) {
    super(message);
  }
}

/** The fake org.freedesktop.systemd1 on one bus connection; answers Manager calls and unit properties. */
export class ManagerService {
  readonly calls: DbusCall[] = [];
  readonly stalled: StalledJob[] = [];
  #bus: MessageBus | undefined;
  #jobId = 0;
  readonly #subscribers = new Set<string>();
  /** Members whose calls are recorded but never answered. */
  readonly unanswered = new Set<string>();
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();

  constructor(private readonly opts: ManagerServiceOptions) {}

  /** Connects to the bus at `address` and takes the name org.freedesktop.systemd1. */
  async attach(address: string): Promise<void> {
    const bus = sessionBus({ busAddress: address });
    await new Promise<void>((resolve, reject) => {
      bus.once("connect", () => resolve());
      bus.once("error", reject);
    });
    // Later errors mean the daemon went away; the next attach starts over.
    bus.on("error", () => {});
    const reply = await bus.requestName(SYSTEMD, NameFlag.DO_NOT_QUEUE);
    if (reply !== RequestNameReply.PRIMARY_OWNER) throw new Error(`cannot own ${SYSTEMD}: reply ${reply}`);
    bus.addMethodHandler((msg: Message) => this.#handle(msg));
    this.#bus = bus;
  }

  detach(): void {
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    this.#subscribers.clear();
    this.#bus?.disconnect();
    this.#bus = undefined;
  }

  /** Lets stalled jobs finish now with `result`. */
  finishStalled(result = "done"): void {
    for (const job of this.stalled.splice(0)) this.#finish(job, result);
  }

  #handle(msg: Message): boolean {
    if (msg.type !== MessageType.METHOD_CALL) return false;
    const isManager = msg.path === MANAGER_PATH && msg.interface === MANAGER;
    const unit = unitNameFromPath(msg.path);
    if (!isManager && !(unit !== undefined && msg.interface === PROPERTIES)) return false;
    const call: DbusCall = { path: msg.path, interface: msg.interface, member: msg.member, args: msg.body };
    this.calls.push(call);
    this.opts.onCall?.(call);
    if (this.unanswered.has(msg.member)) return true;
    try {
      if (isManager) this.#manager(msg);
      else this.#properties(msg, unit ?? "");
    } catch (err) {
      const e = err instanceof CallError ? err : new CallError("org.freedesktop.DBus.Error.Failed", String(err));
      this.#send(errorReply(msg, e.errorName, e.message));
    }
    return true;
  }

  #manager(msg: Message): void {
    const { model } = this.opts;
    const reply = (signature?: string, body?: unknown[]) => this.#send(Message.newMethodReturn(msg, signature, body));
    const job = JOB_ACTION[msg.member];
    if (job) return this.#submit(msg, job[0], job[1], str(msg.body[0]));
    switch (msg.member) {
      case "Subscribe":
        if (this.#subscribers.has(msg.sender)) throw new CallError(`${SYSTEMD}.AlreadySubscribed`, "Client is already subscribed.");
        this.#subscribers.add(msg.sender);
        return reply();
      case "Unsubscribe":
        this.#subscribers.delete(msg.sender);
        return reply();
      case "Reload":
        model.record("DaemonReload", []);
        refuse(model.takeCallFailure("DaemonReload"));
        return reply();
      case "EnableUnitFiles": {
        const units = strs(msg.body[0]);
        model.record("Enable", units);
        refuse(model.setEnabled(units, true, "Enable"));
        const changes = units.map((u) => ["symlink", `/etc/systemd/system/multi-user.target.wants/${u}`, `/etc/systemd/system/${u}`]);
        return reply("ba(sss)", [true, changes]);
      }
      case "DisableUnitFiles": {
        const units = strs(msg.body[0]);
        model.record("Disable", units);
        refuse(model.setEnabled(units, false, "Disable"));
        return reply("a(sss)", [units.map((u) => ["unlink", `/etc/systemd/system/multi-user.target.wants/${u}`, ""])]);
      }
      case "ListUnits":
        model.record("List", []);
        refuse(model.takeCallFailure("List"));
        return reply("a(ssssssouso)", [[...model.units.keys()].map((n) => this.#listRow(n))]);
      case "ListUnitsByNames": {
        const names = strs(msg.body[0]);
        model.record("ListByNames", names);
        refuse(model.takeCallFailure("ListByNames"));
        return reply("a(ssssssouso)", [names.map((n) => this.#listRow(n))]);
      }
      case "GetUnit": {
        const name = str(msg.body[0]);
        if (!model.units.has(name)) throw new CallError(`${SYSTEMD}.NoSuchUnit`, `Unit ${name} not loaded.`);
        return reply("o", [unitPath(name)]);
      }
      case "LoadUnit":
        return reply("o", [unitPath(str(msg.body[0]))]);
      default:
        throw new CallError("org.freedesktop.DBus.Error.UnknownMethod", `Unknown method ${msg.member}.`);
    }
  }

  #properties(msg: Message, name: string): void {
    const { model } = this.opts;
    const iface = str(msg.body[0]);
    const isService = iface === SERVICE && name.endsWith(".service");
    if (iface !== UNIT && !isService) throw new CallError("org.freedesktop.DBus.Error.UnknownInterface", `Unknown interface ${iface}.`);
    const props = iface === UNIT ? this.#unitProps(name) : { Type: new Variant("s", model.view(name).serviceType) };
    if (msg.member === "GetAll") {
      if (iface === UNIT) {
        model.record("UnitProperties", [name]);
        refuse(model.takeCallFailure("UnitProperties"));
      }
      return this.#send(Message.newMethodReturn(msg, "a{sv}", [props]));
    }
    if (msg.member !== "Get") throw new CallError("org.freedesktop.DBus.Error.UnknownMethod", `Unknown method ${msg.member}.`);
    const prop = str(msg.body[1]);
    if (iface === UNIT && prop === "TriggeredBy") model.record("GetTriggeredBy", [name]);
    if (iface === SERVICE && prop === "Type") model.record("GetServiceType", [name]);
    const value = props[prop];
    if (!value) throw new CallError("org.freedesktop.DBus.Error.UnknownProperty", `Unknown property ${prop}.`);
    this.#send(Message.newMethodReturn(msg, "v", [value]));
  }

  #unitProps(name: string): Record<string, Variant> {
    const u = this.opts.model.view(name);
    const us = (ms: number) => new Variant("t", BigInt(ms) * 1000n);
    return {
      Id: new Variant("s", u.name),
      Description: new Variant("s", u.description),
      LoadState: new Variant("s", u.loadState),
      ActiveState: new Variant("s", u.activeState),
      SubState: new Variant("s", u.subState),
      UnitFileState: new Variant("s", u.unitFileState),
      StateChangeTimestamp: us(u.stateChangeTimestampMs),
      ActiveEnterTimestamp: us(u.activeEnterTimestampMs),
      InvocationID: new Variant("ay", Buffer.from(u.invocationId, "hex")),
      TriggeredBy: new Variant("as", [...u.triggeredBy]),
    };
  }

  #listRow(name: string): unknown[] {
    const s = this.opts.model.status(name);
    return [s.name, s.description, s.loadState, s.activeState, s.subState, "", unitPath(name), 0, "", "/"];
  }

  #submit(msg: Message, op: JobOperation, action: SystemdActionName, unit: string): void {
    const { model } = this.opts;
    model.record(action, [unit]);
    const plan = model.planJob(op, unit, action);
    if (plan.kind === "refused") return refuse(plan.refusal);
    const id = ++this.#jobId;
    const job: StalledJob = { id, path: `${MANAGER_PATH}/job/${id}`, op, unit };
    const reply = () => this.#send(Message.newMethodReturn(msg, "o", [job.path]));
    if (plan.kind === "stall") {
      this.stalled.push(job);
      return reply();
    }
    if (this.opts.jobRemovedBeforeReply && plan.delayMs === 0) {
      this.#finish(job, plan.result);
      return reply();
    }
    reply();
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      this.#finish(job, plan.result);
    }, plan.delayMs);
    this.#timers.add(timer);
  }

  #finish(job: StalledJob, result: string): void {
    this.opts.model.finishJob(job.op, job.unit, result);
    // Like systemd, signals go out only while some client is subscribed.
    if (this.#subscribers.size === 0) return;
    this.#send(Message.newSignal(MANAGER_PATH, MANAGER, "JobRemoved", "uoss", [job.id, job.path, job.unit, result]));
  }

  #send(msg: Message): void {
    try {
      this.#bus?.send(msg);
    } catch {
      // The bus went away (restarted by the test); like systemd, the reply is lost with the connection.
    }
  }
}

/** dbus-next's types declare newError(msg: string, …); at runtime it takes the call being answered. */
function errorReply(call: Message, errorName: string, text: string): Message {
  return (Message.newError as unknown as (m: Message, n: string, t: string) => Message)(call, errorName, text);
}

function refuse(refusal: CallRefusal | undefined): void {
  if (refusal) throw new CallError(refusal.errorName, refusal.message);
}

function str(x: unknown): string {
  if (typeof x !== "string") throw new CallError(INVALID_ARGS, "expected a string argument");
  return x;
}

function strs(x: unknown): string[] {
  if (!Array.isArray(x) || !x.every((e) => typeof e === "string")) throw new CallError(INVALID_ARGS, "expected as");
  return x;
}
