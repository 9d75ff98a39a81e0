import { describe, expect, test } from "bun:test";
import { SystemdCallError, SystemdJobError } from "../../../src/systemd/types.ts";
import { FakeClock } from "../fake-clock.ts";
import { FakeSystemd } from "./fake-systemd.ts";
import { eventually } from "../../harness/eventually.ts";

describe("FakeSystemd", () => {
  test("should record every call in order with the unit names passed", async () => {
    const systemd = new FakeSystemd();
    await systemd.daemonReload();
    await systemd.enable(["a.service", "b.service"]);
    await systemd.start("a.service");
    await systemd.listUnitsByNames(["a.service"]);
    await systemd.unitProperties("a.service");
    await systemd.triggeredBy("a.service");
    await systemd.serviceType("a.service");
    await systemd.disable(["b.service"]);
    expect(systemd.actions).toEqual([
      { action: "DaemonReload", units: [] },
      { action: "Enable", units: ["a.service", "b.service"] },
      { action: "Start", units: ["a.service"] },
      { action: "ListByNames", units: ["a.service"] },
      { action: "UnitProperties", units: ["a.service"] },
      { action: "GetTriggeredBy", units: ["a.service"] },
      { action: "GetServiceType", units: ["a.service"] },
      { action: "Disable", units: ["b.service"] },
    ]);
  });

  test("should let a unit fail some time after a successful restart (failAfterStart), per invocation", async () => {
    const systemd = new FakeSystemd();
    systemd.failAfterStart("app.service", 20);
    await systemd.restart("app.service");
    expect((await systemd.unitProperties("app.service")).activeState).toBe("active");
    await eventually("app.service to fail", async () => (await systemd.unitProperties("app.service")).activeState, {
      until: (state) => state === "failed",
      timeoutMs: 2_000,
    });
    expect((await systemd.unitProperties("app.service")).activeState).toBe("failed");
    systemd.clearInjections();
    await systemd.restart("app.service");
    expect((await systemd.unitProperties("app.service")).activeState).toBe("active");
  });

  test("should fail only the first restart after failNextJob, recording both", async () => {
    const systemd = new FakeSystemd();
    systemd.failNextJob("kubelet.service", { operation: "restart" });
    const err = await systemd.restart("kubelet.service").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SystemdJobError);
    expect((err as Error).message).toBe("restart failed for kubelet.service, due failed");
    await systemd.restart("kubelet.service");
    expect(systemd.actions).toEqual([
      { action: "Restart", units: ["kubelet.service"] },
      { action: "Restart", units: ["kubelet.service"] },
    ]);
  });

  test("should give a new InvocationID and the clock's time on restart", async () => {
    const clock = new FakeClock(1_700_000_000_000);
    const systemd = new FakeSystemd({ clock });
    await systemd.restart("a.service");
    const first = await systemd.unitProperties("a.service");
    clock.step(5_000);
    await systemd.restart("a.service");
    const second = await systemd.unitProperties("a.service");
    expect(first).toMatchObject({ activeState: "active", subState: "running", stateChangeTimestampMs: 1_700_000_000_000 });
    expect(second.stateChangeTimestampMs).toBe(1_700_000_005_000);
    expect(second.invocationId).not.toBe(first.invocationId);
  });

  test("should resolve a stalled job once the job timeout passed", async () => {
    const clock = new FakeClock();
    const systemd = new FakeSystemd({ clock, jobTimeoutMs: 10_000 });
    systemd.stallJobs("slow.service");
    let settled = false;
    const pending = systemd.start("slow.service").then(() => (settled = true));
    await clock.waitForSleepers(1);
    clock.step(9_999);
    await clock.settle();
    expect(settled).toBe(false);
    clock.step(1);
    await pending;
    expect(settled).toBe(true);
  });

  test("should refuse jobs and enable for units made unknown", async () => {
    const systemd = new FakeSystemd();
    systemd.makeUnknown("ghost.service");
    expect(await systemd.start("ghost.service").catch((e: unknown) => e)).toBeInstanceOf(SystemdCallError);
    const err = await systemd.enable(["ghost.service"]).catch((e: unknown) => e);
    expect((err as Error).message).toBe("unable to enable units ghost.service: Unit file ghost.service does not exist.");
  });

  test("should answer upstream's defaults for units it does not know", async () => {
    const systemd = new FakeSystemd();
    expect(await systemd.listUnitsByNames(["x.service"])).toEqual([]);
    expect(await systemd.triggeredBy("x.service")).toEqual([]);
    expect(await systemd.serviceType("x.service")).toBe("simple");
    expect((await systemd.unitProperties("x.service")).stateChangeTimestampMs).toBe(0);
  });

  test("should fail a daemon-reload once when told to", async () => {
    const systemd = new FakeSystemd();
    systemd.failNextCall("DaemonReload", "Access denied");
    const err = await systemd.daemonReload().catch((e: unknown) => e);
    expect((err as Error).message).toBe("systemd daemon-reload failed: Access denied");
    await systemd.daemonReload();
  });

  test("should reject with the signal's reason when aborted", async () => {
    const systemd = new FakeSystemd({ clock: new FakeClock() });
    systemd.stallJobs("slow.service");
    const ac = new AbortController();
    const pending = systemd.stop("slow.service", ac.signal);
    const reason = new Error("shutdown");
    ac.abort(reason);
    expect(await pending.catch((e: unknown) => e)).toBe(reason);
  });

  test("should hold the next job of a unit until released, recording it at once", async () => {
    const systemd = new FakeSystemd();
    const hold = systemd.holdNextJob("kubelet.service");
    let finished = false;
    const restart = systemd.restart("kubelet.service").then(() => (finished = true));
    await hold.reached;
    expect(systemd.actions.map((a) => a.action)).toEqual(["Restart"]);
    expect(finished).toBe(false);
    hold.release();
    await restart;
    expect(systemd.units.get("kubelet.service")?.activeState).toBe("active");
    await systemd.restart("kubelet.service"); // only the next job was held
  });
});
