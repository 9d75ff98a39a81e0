import { describe, expect, test } from "bun:test";
import { FakeClock } from "../../../test/doubles/fake-clock.ts";
import { eventually } from "../../../test/harness/eventually.ts";
import type { KubeObject, Source } from "../../kube/index.ts";
import type { Logger } from "../../log/index.ts";
import { createUnitCheckNow, type UnitCheckNow } from "../shared/index.ts";
import { newSystemdUnitCheckController, systemdUnitCheckPredicate } from "./watch.ts";

const noLog: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => noLog };

const node = (host: string): KubeObject => ({ metadata: { name: "node-a", labels: { "kubernetes.io/hostname": host } } });

describe("systemdUnitCheckPredicate", () => {
  const p = systemdUnitCheckPredicate("worker-a");
  describe("create", () => {
    test("should pass the own node", () => expect(p.create(node("worker-a"))).toBe(true));
    test("should drop another host's node", () => expect(p.create(node("worker-b"))).toBe(false));
  });
  describe("update", () => {
    test("should never pass, so the own condition patches do not wake the controller", () => {
      expect(p.update(node("worker-a"), node("worker-a"))).toBe(false);
    });
  });
  describe("delete", () => {
    test("should never pass", () => expect(p.delete(node("worker-a"))).toBe(false));
  });
  describe("generic", () => {
    test("should never pass", () => expect(p.generic(node("worker-a"))).toBe(false));
  });
});

describe("newSystemdUnitCheckController with checkNow (issue 25)", () => {
  const period = 60_000;
  const own = node("worker-a");
  /** The Node informer's initial replay: one create of the own Node. */
  const replay: Source<KubeObject> = {
    subscribe: (sink) => {
      sink.create(own);
      return () => {};
    },
  };

  async function run(
    body: (ctx: { clock: FakeClock; checks: number[]; now: UnitCheckNow; gate: { hold?: Promise<void> | undefined } }) => Promise<void>,
  ) {
    const clock = new FakeClock();
    const checks: number[] = [];
    const gate: { hold?: Promise<void> | undefined } = {};
    const now = createUnitCheckNow();
    const c = newSystemdUnitCheckController({
      reconcile: async () => {
        checks.push(clock.now());
        await gate.hold;
        return { requeueAfterMs: period };
      },
      source: replay,
      checkNow: now.source,
      hostName: "worker-a",
      syncPeriodMs: period,
      clock,
      log: noLog,
    });
    const stop = new AbortController();
    const running = c.start(stop.signal);
    try {
      await body({ clock, checks, now, gate });
    } finally {
      stop.abort();
      await running;
    }
  }
  const count = (checks: number[], n: number) =>
    eventually(`${n} unit checks`, () => checks.length, { until: (l) => l >= n, intervalMs: 0 });

  test("should check at once on a request, without the clock moving, and keep its periodic schedule", async () => {
    await run(async ({ clock, checks, now }) => {
      await count(checks, 1);
      clock.step(10_000);
      now.request("node-a");
      await count(checks, 2);
      expect(checks).toEqual([clock.now() - 10_000, clock.now()]);
      // The periodic check keeps its schedule: one period after the first.
      clock.step(period - 10_000 - 1);
      await clock.settle(50);
      expect(checks).toHaveLength(2);
      clock.step(1);
      await count(checks, 3);
      expect(checks[2]).toBe((checks[0] ?? 0) + period);
    });
  });

  test("should check once more after a check that a request arrived during", async () => {
    await run(async ({ clock, checks, now, gate }) => {
      let release = () => {};
      gate.hold = new Promise<void>((r) => (release = r));
      await count(checks, 1);
      now.request("node-a");
      now.request("node-a");
      await clock.settle();
      expect(checks).toHaveLength(1);
      gate.hold = undefined;
      release();
      await count(checks, 2);
      await clock.settle(50);
      // Two requests during one check: one check after it, not two.
      expect(checks).toHaveLength(2);
    });
  });
});
