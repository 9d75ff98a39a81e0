import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { realClock, type Clock } from "../../src/clock/index.ts";
import type { LogFields, Logger } from "../../src/log/types.ts";
import { BusConnection, type BusCall } from "../../src/systemd/dbus-connection.ts";
import { createDbusSystemd, DEFAULT_JOB_TIMEOUT_MS } from "../../src/systemd/dbus.ts";
import { SystemdCallError, SystemdJobError, type JobOperation, type Systemd } from "../../src/systemd/types.ts";
import { FakeSystemd, startSystemdDouble, type SystemdDouble, type SystemdFakeControls } from "../doubles/systemd/index.ts";
import { eventually } from "../harness/eventually.ts";

interface Logged {
  readonly msg: string;
  readonly fields: LogFields;
}

function recordingLogger(into: Logged[]): Logger {
  const put = (msg: string, fields: LogFields = {}) => void into.push({ msg, fields });
  const log: Logger = { debug: put, info: put, warn: put, error: put, child: () => log };
  return log;
}

/** Timestamps the double stamps on state changes. */
const NOW_MS = 1_700_000_000_123;
const fixedClock: Clock = { now: () => NOW_MS, sleep: realClock.sleep };

const managerCalls = (d: SystemdDouble) =>
  d.calls.filter((c) => c.member !== "Subscribe").map((c) => ({ path: c.path, interface: c.interface, member: c.member, args: c.args }));

describe("createDbusSystemd against a dbus-daemon with a fake systemd Manager", () => {
  let double: SystemdDouble;
  let systemd: Systemd;
  let logged: Logged[];
  let ac: AbortController;

  beforeAll(async () => {
    double = await startSystemdDouble({
      clock: fixedClock,
      units: [
        {
          name: "kubelet.service",
          description: "kubelet daemon",
          activeState: "active",
          subState: "running",
          unitFileState: "enabled",
          stateChangeTimestampMs: 1_650_000_000_999,
          invocationId: "0123456789abcdef0123456789abcdef",
          serviceType: "notify",
        },
        { name: "logrotate.service", serviceType: "oneshot", triggeredBy: ["logrotate.timer"] },
        { name: "restarted.service", activeState: "active", subState: "running", invocationId: "00000000000000000000000000000001" },
        { name: "noreload.service", activeState: "active", subState: "running", canReload: false },
      ],
    });
  });
  afterAll(async () => {
    await double.stop();
  });
  beforeEach(async () => {
    logged = [];
    ac = new AbortController();
    systemd = await createDbusSystemd({ address: double.address, log: recordingLogger(logged), jobTimeoutMs: 300 });
  });
  afterEach(() => {
    ac.abort();
    systemd.close();
    double.clearActions();
    double.clearCalls();
    double.clearInjections();
  });

  test("the default wait for a job result is 10 s", () => {
    expect(DEFAULT_JOB_TIMEOUT_MS).toBe(10_000);
  });

  describe("daemonReload", () => {
    test("should call Reload without arguments", async () => {
      await systemd.daemonReload(ac.signal);
      expect(double.actions).toEqual([{ action: "DaemonReload", units: [] }]);
      expect(managerCalls(double)).toEqual([
        { path: "/org/freedesktop/systemd1", interface: "org.freedesktop.systemd1.Manager", member: "Reload", args: [] },
      ]);
    });

    test("should wrap a refusal as 'systemd daemon-reload failed'", async () => {
      double.failNextCall("DaemonReload", "Access denied");
      const err = await systemd.daemonReload(ac.signal).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SystemdCallError);
      expect((err as Error).message).toBe("systemd daemon-reload failed: Access denied");
    });
  });

  describe("enable and disable", () => {
    test("should enable persistently with force and no reload", async () => {
      await systemd.enable(["a.service", "b.service"], ac.signal);
      expect(managerCalls(double)).toEqual([
        {
          path: "/org/freedesktop/systemd1",
          interface: "org.freedesktop.systemd1.Manager",
          member: "EnableUnitFiles",
          args: [["a.service", "b.service"], false, true],
        },
      ]);
      expect(double.actions).toEqual([{ action: "Enable", units: ["a.service", "b.service"] }]);
      expect(double.units.get("a.service")?.unitFileState).toBe("enabled");
    });

    test("should disable persistently with no reload", async () => {
      await systemd.disable(["a.service"], ac.signal);
      expect(managerCalls(double)).toEqual([
        {
          path: "/org/freedesktop/systemd1",
          interface: "org.freedesktop.systemd1.Manager",
          member: "DisableUnitFiles",
          args: [["a.service"], false],
        },
      ]);
      expect(double.units.get("a.service")?.unitFileState).toBe("disabled");
    });

    test("should fail with SystemdCallError when a unit file does not exist", async () => {
      double.makeUnknown("missing.service");
      const err = await systemd.enable(["missing.service"], ac.signal).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SystemdCallError);
      expect((err as Error).message).toBe("unable to enable units missing.service: Unit file missing.service does not exist.");
    });
  });

  describe.each([
    ["start", "StartUnit", "Start"],
    ["stop", "StopUnit", "Stop"],
    ["restart", "RestartUnit", "Restart"],
  ] as const)("%s", (op: JobOperation, member, action) => {
    test(`should call ${member}(unit, "replace") and resolve when the job is done`, async () => {
      await systemd[op]("job.service", ac.signal);
      expect(managerCalls(double)).toEqual([
        { path: "/org/freedesktop/systemd1", interface: "org.freedesktop.systemd1.Manager", member, args: ["job.service", "replace"] },
      ]);
      expect(double.actions).toEqual([{ action, units: ["job.service"] }]);
      expect(logged.map((l) => l.msg)).not.toContain("Systemd operation is blocking for more than 10s, aborting and continuing anyways");
    });

    test.each(["failed", "dependency", "canceled"] as const)("should reject with SystemdJobError when the job ends %s", async (result) => {
      double.failNextJob("job.service", { result, operation: op });
      const err = await systemd[op]("job.service", ac.signal).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SystemdJobError);
      expect(err).toMatchObject({ operation: op, unit: "job.service", result, message: `${op} failed for job.service, due ${result}` });
    });

    test("should reject with SystemdCallError when the job is not submitted", async () => {
      double.failNextCall(action, "Transaction is destructive.");
      const err = await systemd[op]("job.service", ac.signal).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SystemdCallError);
      expect((err as Error).message).toBe(`unable to ${op} unit job.service: Transaction is destructive.`);
    });

    test("should resolve and log when no result arrives within the job timeout", async () => {
      double.stallJobs("stuck.service");
      await systemd[op]("stuck.service", ac.signal);
      expect(logged).toContainEqual({
        msg: "Systemd operation is blocking for more than 10s, aborting and continuing anyways",
        fields: { unitName: "stuck.service", operation: op },
      });
    });

    test("should reject with the signal's reason when aborted while waiting", async () => {
      double.stallJobs("stuck.service");
      const reason = new Error("shutting down");
      const stalledBefore = double.stalledJobs;
      const pending = systemd[op]("stuck.service", ac.signal);
      await eventually("the stalled job", () => double.stalledJobs, { until: (n) => n > stalledBefore, timeoutMs: 5_000 });
      ac.abort(reason);
      expect(await pending.catch((e: unknown) => e)).toBe(reason);
    });
  });

  describe("reload", () => {
    test('should call ReloadUnit(unit, "replace") on an active unit and keep its invocation', async () => {
      await systemd.restart("reloaded.service", ac.signal);
      const before = await systemd.unitProperties("reloaded.service");
      double.clearActions();
      double.clearCalls();
      await systemd.reload("reloaded.service", ac.signal);
      expect(managerCalls(double)).toEqual([
        {
          path: "/org/freedesktop/systemd1",
          interface: "org.freedesktop.systemd1.Manager",
          member: "ReloadUnit",
          args: ["reloaded.service", "replace"],
        },
      ]);
      expect(double.actions).toEqual([{ action: "Reload", units: ["reloaded.service"] }]);
      const after = await systemd.unitProperties("reloaded.service");
      expect(after).toMatchObject({ activeState: "active", subState: "running", invocationId: before.invocationId });
    });

    test("should reject with SystemdJobError (invalid) for a unit that is not active, as systemd does", async () => {
      const err = await systemd.reload("stopped.service", ac.signal).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SystemdJobError);
      expect(err).toMatchObject({ operation: "reload", unit: "stopped.service", result: "invalid" });
    });

    test("should reject with SystemdCallError for a unit without ExecReload", async () => {
      const err = await systemd.reload("noreload.service", ac.signal).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SystemdCallError);
      expect((err as Error).message).toBe(
        "unable to reload unit noreload.service: Job type reload is not applicable for unit noreload.service.",
      );
    });
  });

  describe("jobs", () => {
    test("should not submit anything when the signal is already aborted", async () => {
      const reason = new Error("gone");
      ac.abort(reason);
      expect(await systemd.restart("a.service", ac.signal).catch((e: unknown) => e)).toBe(reason);
      expect(double.actions).toEqual([]);
    });

    test("should refuse to start a unit systemd does not know", async () => {
      double.makeUnknown("nope.service");
      const err = await systemd.start("nope.service", ac.signal).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SystemdCallError);
      expect((err as Error).message).toBe("unable to start unit nope.service: Unit nope.service not found.");
    });

    test("should match each JobRemoved to its own job when jobs run at the same time", async () => {
      double.delayJobs("slow.service", 100);
      double.failNextJob("slow.service", { result: "timeout" });
      const results = await Promise.allSettled([systemd.restart("slow.service", ac.signal), systemd.restart("fast.service", ac.signal)]);
      expect(results[0]).toMatchObject({ status: "rejected", reason: { result: "timeout", unit: "slow.service" } });
      expect(results[1]).toEqual({ status: "fulfilled", value: undefined });
    });

    test("should change the unit's state and InvocationID on restart", async () => {
      const before = await systemd.unitProperties("restarted.service", ac.signal);
      await systemd.restart("restarted.service", ac.signal);
      const after = await systemd.unitProperties("restarted.service", ac.signal);
      expect(after).toMatchObject({ activeState: "active", subState: "running", stateChangeTimestampMs: NOW_MS });
      expect(after.invocationId).toMatch(/^[0-9a-f]{32}$/);
      expect(after.invocationId).not.toBe(before.invocationId);
    });
  });

  describe("listUnits and listUnitsByNames", () => {
    test("should list loaded units with ListUnits", async () => {
      const units = await systemd.listUnits(ac.signal);
      expect(units).toContainEqual({
        name: "logrotate.service",
        description: "logrotate.service",
        loadState: "loaded",
        activeState: "inactive",
        subState: "dead",
      });
      expect(managerCalls(double).map((c) => [c.member, c.args])).toEqual([["ListUnits", []]]);
    });

    test("should answer unknown names with not-found, like systemd", async () => {
      const units = await systemd.listUnitsByNames(["kubelet.service", "ghost.service"], ac.signal);
      expect(units).toEqual([
        { name: "kubelet.service", description: "kubelet daemon", loadState: "loaded", activeState: "active", subState: "running" },
        { name: "ghost.service", description: "ghost.service", loadState: "not-found", activeState: "inactive", subState: "dead" },
      ]);
      expect(double.actions).toEqual([{ action: "ListByNames", units: ["kubelet.service", "ghost.service"] }]);
    });
  });

  describe("unit properties", () => {
    test("should read Unit properties with LoadUnit and GetAll, µs timestamps as ms and InvocationID as hex", async () => {
      const props = await systemd.unitProperties("kubelet.service", ac.signal);
      expect(props).toEqual({
        activeState: "active",
        subState: "running",
        loadState: "loaded",
        unitFileState: "enabled",
        stateChangeTimestampMs: 1_650_000_000_999,
        invocationId: "0123456789abcdef0123456789abcdef",
      });
      expect(managerCalls(double)).toEqual([
        { path: "/org/freedesktop/systemd1", interface: "org.freedesktop.systemd1.Manager", member: "LoadUnit", args: ["kubelet.service"] },
        {
          path: "/org/freedesktop/systemd1/unit/kubelet_2eservice",
          interface: "org.freedesktop.DBus.Properties",
          member: "GetAll",
          args: ["org.freedesktop.systemd1.Unit"],
        },
      ]);
    });

    test("should report a unit without a file as not-found with a zero timestamp", async () => {
      expect(await systemd.unitProperties("ghost.service", ac.signal)).toEqual({
        activeState: "inactive",
        subState: "dead",
        loadState: "not-found",
        unitFileState: "",
        stateChangeTimestampMs: 0,
        invocationId: "",
      });
    });

    test("should read TriggeredBy of the Unit interface", async () => {
      expect(await systemd.triggeredBy("logrotate.service", ac.signal)).toEqual(["logrotate.timer"]);
      expect(managerCalls(double).at(-1)).toEqual({
        path: "/org/freedesktop/systemd1/unit/logrotate_2eservice",
        interface: "org.freedesktop.DBus.Properties",
        member: "Get",
        args: ["org.freedesktop.systemd1.Unit", "TriggeredBy"],
      });
      expect(double.actions).toEqual([{ action: "GetTriggeredBy", units: ["logrotate.service"] }]);
    });

    test("should read Type of the Service interface", async () => {
      expect(await systemd.serviceType("kubelet.service", ac.signal)).toBe("notify");
      expect(managerCalls(double).at(-1)?.args).toEqual(["org.freedesktop.systemd1.Service", "Type"]);
    });

    test("should fail for the service type of a unit that is not a service", async () => {
      const err = await systemd.serviceType("logrotate.timer", ac.signal).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SystemdCallError);
      expect((err as Error).message).toBe(
        "unable to read service type of unit logrotate.timer: Unknown interface org.freedesktop.systemd1.Service.",
      );
    });
  });

  describe("connection", () => {
    test("should not connect before the first call", () => {
      expect(double.calls).toEqual([]);
    });

    test("should subscribe once per connection", async () => {
      await systemd.daemonReload(ac.signal);
      await systemd.restart("a.service", ac.signal);
      await systemd.listUnits(ac.signal);
      expect(double.calls.filter((c) => c.member === "Subscribe")).toHaveLength(1);
    });

    test("should open one connection for calls made at the same time", async () => {
      await Promise.all([systemd.listUnits(ac.signal), systemd.daemonReload(ac.signal), systemd.restart("a.service", ac.signal)]);
      expect(double.calls.filter((c) => c.member === "Subscribe")).toHaveLength(1);
    });

    test("should fail a call that gets no reply within the call timeout", async () => {
      const impatient = await createDbusSystemd({ address: double.address, log: recordingLogger([]), callTimeoutMs: 200 });
      try {
        await impatient.listUnits(ac.signal);
        double.leaveUnanswered("Reload");
        const err = await impatient.daemonReload(ac.signal).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(SystemdCallError);
        expect((err as Error).message).toBe("systemd daemon-reload failed: no reply to Reload within 200 ms");
      } finally {
        impatient.close();
      }
    });

    test("should fail calls after close", async () => {
      await systemd.daemonReload(ac.signal);
      systemd.close();
      expect(await systemd.daemonReload(ac.signal).catch((e: unknown) => e)).toBeInstanceOf(SystemdCallError);
    });
  });
});

describe("createDbusSystemd when JobRemoved arrives before the reply", () => {
  let double: SystemdDouble;
  let systemd: Systemd;
  let logged: Logged[];

  beforeAll(async () => {
    double = await startSystemdDouble({ jobRemovedBeforeReply: true });
    logged = [];
    // Long enough that a missed signal would show as a resolved wait instead of the job's result.
    systemd = await createDbusSystemd({ address: double.address, log: recordingLogger(logged), jobTimeoutMs: 5_000 });
  });
  afterAll(async () => {
    systemd.close();
    await double.stop();
  });

  test("should still see a failed result", async () => {
    double.failNextJob("quick.service");
    const err = await systemd.start("quick.service").catch((e: unknown) => e);
    expect(err).toMatchObject({ name: "SystemdJobError", result: "failed" });
  });

  test("should still see a done result", async () => {
    await systemd.restart("quick.service");
    expect(logged.map((l) => l.msg)).not.toContain("Systemd operation is blocking for more than 10s, aborting and continuing anyways");
  });
});

describe("createDbusSystemd when the bus restarts", () => {
  const own = ownDoublePerTest();

  test("should reconnect and resubscribe on the next call", async () => {
    await own.systemd.daemonReload();
    await own.double.restartBus();
    await own.systemd.daemonReload();
    // A job result proves the new connection is subscribed to JobRemoved.
    own.double.failNextJob("after.service");
    expect(await own.systemd.restart("after.service").catch((e: unknown) => e)).toBeInstanceOf(SystemdJobError);
    expect(own.double.actions.map((a) => a.action)).toEqual(["DaemonReload", "DaemonReload", "Restart"]);
    expect(own.double.calls.filter((c) => c.member === "Subscribe")).toHaveLength(2);
  });

  test("should fail with SystemdCallError while the bus is down and recover once it is back", async () => {
    await own.systemd.daemonReload();
    await own.double.stopBus();
    const err = await own.systemd.daemonReload().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SystemdCallError);
    await own.double.startBus();
    await own.systemd.daemonReload();
    expect(own.double.actions.map((a) => a.action)).toEqual(["DaemonReload", "DaemonReload"]);
  });
});

describe("the in-memory FakeSystemd and the D-Bus double", () => {
  /** One scenario, run against each double; both must record and fail alike. */
  async function scenario(systemd: Systemd, controls: SystemdFakeControls): Promise<unknown[]> {
    controls.failNextJob("b.service", { operation: "restart" });
    controls.makeUnknown("ghost.service");
    const outcomes: unknown[] = [];
    const run = async (f: () => Promise<unknown>) => {
      try {
        outcomes.push(await f());
      } catch (err) {
        outcomes.push({ error: err instanceof Error ? err.name : "?", message: (err as Error).message });
      }
    };
    await run(() => systemd.daemonReload());
    await run(() => systemd.enable(["a.service", "b.service"]));
    await run(() => systemd.restart("a.service"));
    await run(() => systemd.restart("b.service"));
    await run(() => systemd.restart("b.service"));
    await run(() => systemd.start("ghost.service"));
    await run(() => systemd.stop("a.service"));
    await run(async () => (await systemd.unitProperties("a.service")).activeState);
    await run(() => systemd.triggeredBy("a.service"));
    await run(() => systemd.serviceType("a.service"));
    await run(() => systemd.disable(["b.service"]));
    return [outcomes, controls.actions];
  }

  test("should record the same actions and fail the same way", async () => {
    const fake = new FakeSystemd();
    const fromFake = await scenario(fake, fake);
    const double = await startSystemdDouble();
    const systemd = await createDbusSystemd({ address: double.address, log: recordingLogger([]), jobTimeoutMs: 5_000 });
    try {
      expect(await scenario(systemd, double)).toEqual(fromFake);
    } finally {
      systemd.close();
      await double.stop();
    }
  });
});

describe("the JobRemoved match, held only while a job waits for its result", () => {
  const JOB_REMOVED_MATCH =
    "type='signal',sender='org.freedesktop.systemd1',path='/org/freedesktop/systemd1',interface='org.freedesktop.systemd1.Manager',member='JobRemoved'";
  const own = ownDoublePerTest();

  const failedRestart = async (unit: string) => {
    own.double.failNextJob(unit);
    return own.systemd.restart(unit).catch((e: unknown) => e);
  };

  test("should see the result of the first job on a connection that was idle", async () => {
    await own.systemd.daemonReload();
    expect(await failedRestart("first.service")).toBeInstanceOf(SystemdJobError);
  });

  test("should see every result of jobs one after another (the match removed and added again between them)", async () => {
    for (let i = 0; i < 4; i++) {
      await own.systemd.restart(`ok-${i}.service`);
      expect(await failedRestart(`bad-${i}.service`)).toMatchObject({ name: "SystemdJobError", unit: `bad-${i}.service` });
    }
  });

  test("should see a slow job's result after an overlapping job finished first", async () => {
    own.double.delayJobs("slow.service", 200);
    own.double.failNextJob("slow.service", { result: "timeout" });
    const slow = own.systemd.restart("slow.service").catch((e: unknown) => e);
    await own.systemd.restart("fast.service");
    own.double.failNextJob("next.service");
    const next = own.systemd.restart("next.service").catch((e: unknown) => e);
    expect(await slow).toMatchObject({ name: "SystemdJobError", result: "timeout", unit: "slow.service" });
    expect(await next).toMatchObject({ name: "SystemdJobError", unit: "next.service" });
  });

  test("should see a job's result when the job's call is the first on a new connection after the bus restarted", async () => {
    await own.systemd.restart("before.service");
    await own.double.restartBus();
    expect(await failedRestart("after.service")).toBeInstanceOf(SystemdJobError);
  });

  test("should not be sent other clients' JobRemoved while no job of its own waits", async () => {
    const received: string[] = [];
    const idle = new BusConnection({
      address: own.double.address,
      log: recordingLogger([]),
      callTimeoutMs: 5_000,
      onConnect: async (conn) => void (await conn.call(managerCall("Subscribe"))),
      signalMatch: JOB_REMOVED_MATCH,
      // NameAcquired (our unique name) is sent to every client whatever its match rules.
      onSignal: (s) => void (s.member === "JobRemoved" && received.push(s.member)),
    });
    try {
      await idle.call(managerCall("ListUnits"));
      for (let i = 0; i < 5; i++) await own.systemd.restart(`other-${i}.service`);
      // A call answered after those jobs finished: their signals would have been delivered before its reply.
      await idle.call(managerCall("ListUnits"));
      expect(received).toEqual([]);

      const release = idle.holdSignals();
      await own.systemd.restart("while-held.service");
      await eventually("the JobRemoved sent while held", () => received.length, { until: (n) => n === 1, timeoutMs: 5_000 });
      release();
      for (let i = 0; i < 5; i++) await own.systemd.restart(`after-${i}.service`);
      await idle.call(managerCall("ListUnits"));
      expect(received).toEqual(["JobRemoved"]);
    } finally {
      idle.close();
    }
  });
});

/**
 * A fresh double and client for each test of the calling describe; the job timeout is long enough that a
 * missed JobRemoved shows as a resolved wait instead of the job's failure.
 */
function ownDoublePerTest(): { double: SystemdDouble; systemd: Systemd } {
  const own = {} as { double: SystemdDouble; systemd: Systemd };
  beforeEach(async () => {
    own.double = await startSystemdDouble();
    own.systemd = await createDbusSystemd({ address: own.double.address, log: recordingLogger([]), jobTimeoutMs: 5_000 });
  });
  afterEach(async () => {
    own.systemd.close();
    await own.double.stop();
  });
  return own;
}

function managerCall(member: string): BusCall {
  return { destination: "org.freedesktop.systemd1", path: "/org/freedesktop/systemd1", iface: "org.freedesktop.systemd1.Manager", member };
}
