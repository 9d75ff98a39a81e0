import { describe, expect, test } from "bun:test";
import { FakeClock } from "../../../test/doubles/fake-clock.ts";
import { FakeSystemd } from "../../../test/doubles/systemd/index.ts";
import type { KubeObject } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import type { EventRecorder } from "../events.ts";
import { ContainerdChecker, ContainerdRestartError } from "./containerd.ts";

const log: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => log };
const node: KubeObject = { metadata: { name: "node-a", uid: "u1" } };

function setup() {
  const clock = new FakeClock();
  const systemd = new FakeSystemd({ clock });
  const events: string[] = [];
  const recorder: EventRecorder = {
    event: async (_o, type, reason, action, note) => void events.push(`${type} ${reason} ${action}: ${note}`),
  };
  let failure: Error | undefined;
  const checker = new ContainerdChecker({
    probe: async () => {
      if (failure !== undefined) throw failure;
    },
    systemd,
    events: recorder,
    clock,
    log,
  });
  const signal = new AbortController().signal;
  return {
    clock,
    systemd,
    events,
    check: () => checker.check(node, signal),
    fail: (msg: string | undefined) => (failure = msg === undefined ? undefined : new Error(msg)),
  };
}

describe("ContainerdChecker", () => {
  test("should stay silent while containerd answers", async () => {
    const s = setup();
    await s.check();
    expect(s.events).toEqual([]);
    expect(s.systemd.actions).toEqual([]);
  });

  test("should warn once, wait a minute, then restart containerd and report it healthy afterwards", async () => {
    const s = setup();
    s.fail("connection refused");
    await s.check();
    s.clock.step(59_999);
    await s.check();
    expect(s.events).toEqual(["Warning containerd HealthCheck: Containerd is unhealthy: connection refused"]);
    expect(s.systemd.actions).toEqual([]);

    s.clock.step(1);
    await s.check();
    expect(s.events.slice(1)).toEqual([
      "Warning containerd HealthCheck: Containerd is unhealthy for more than 1m0s, restarting it: connection refused",
      "Normal SystemDUnitRestart restart: processed restart of unit containerd.service",
    ]);
    expect(s.systemd.actions).toEqual([{ action: "Restart", units: ["containerd.service"] }]);

    // The restart cleared the history: the next failure starts a new minute.
    s.clock.step(10_000);
    await s.check();
    expect(s.events.at(-1)).toBe("Warning containerd HealthCheck: Containerd is unhealthy: connection refused");
    expect(s.systemd.actions).toHaveLength(1);
    s.fail(undefined);
    await s.check();
    expect(s.events.at(-1)).toBe("Normal containerd HealthCheck: Containerd is healthy");
  });

  test("should return the restart error and restart again on the next pass", async () => {
    const s = setup();
    s.fail("deadline exceeded");
    s.systemd.failNextJob("containerd.service");
    await s.check();
    s.clock.step(60_000);
    const err = await s.check().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContainerdRestartError);
    expect((err as Error).message).toBe("failed restarting containerd: restart failed for containerd.service, due failed");
    expect(s.events.at(-1)).toBe(
      "Warning SystemDUnitRestart restart: processed restart of unit containerd.service failed with error restart failed for containerd.service, due failed",
    );
    await s.check();
    expect(s.systemd.actions).toEqual([
      { action: "Restart", units: ["containerd.service"] },
      { action: "Restart", units: ["containerd.service"] },
    ]);
    expect(s.events.at(-1)).toBe("Normal SystemDUnitRestart restart: processed restart of unit containerd.service");
  });

  test("should record no restart event when the job could not be submitted", async () => {
    const s = setup();
    s.fail("deadline exceeded");
    s.systemd.failNextCall("Restart", "access denied");
    await s.check();
    s.clock.step(60_000);
    const err = await s.check().catch((e: unknown) => e);
    expect((err as Error).message).toBe("failed restarting containerd: unable to restart unit containerd.service: access denied");
    expect(s.events.filter((e) => e.includes("SystemDUnitRestart"))).toEqual([]);
  });
});
