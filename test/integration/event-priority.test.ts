// Issue 27 "Events in priority" (whole binary): while Event creates are stuck at the API server, the agent's
// event queue fills with one Normal restart event per unit; the apply's failure Warnings must be sent before
// them once the API server answers again, and the Normals arrive aggregated (count), not one by one.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eventually } from "../harness/eventually.ts";
import { startSandbox, type Sandbox } from "../harness/sandbox.ts";

const UNITS = 30;
const unitName = (i: number) => `ev-${String(i).padStart(2, "0")}.service`;

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox({ nodeName: "event-priority" });
});
afterAll(async () => {
  await sb.stop();
});

interface StoredEvent {
  readonly type: string;
  readonly reason: string;
  readonly message: string;
  readonly count: number;
  readonly rv: number;
}

/** The Node's events in the order the API server stored them. */
const storedEvents = (): StoredEvent[] =>
  (sb.sim.store.list("events", { namespace: "default" }) as Record<string, unknown>[])
    .map((e) => ({
      type: String(e["type"]),
      reason: String(e["reason"]),
      message: String(e["message"]),
      count: Number(e["count"]),
      rv: Number((e["metadata"] as { resourceVersion: string }).resourceVersion),
    }))
    .sort((a, b) => a.rv - b.rv);

const applyFailed = (): boolean => {
  const conditions = ((sb.node()?.["status"] as { conditions?: { reason?: string }[] } | undefined)?.conditions ?? []) as {
    reason?: string;
  }[];
  return conditions.some((c) => c.reason === "ApplyFailed");
};

describe("event priority and aggregation (whole binary)", () => {
  test("should send the failure's Warnings before the waiting Normal events, and aggregate the Normals", async () => {
    const units = Array.from(
      { length: UNITS },
      (_, i) => `  - name: ${unitName(i)}\n    content: "[Service]\\nExecStart=/bin/true\\n"\n`,
    ).join("");
    // The last unit's restart fails, so the apply fails after the other units' restart events were queued.
    sb.systemd.failJobs(unitName(UNITS - 1), { operation: "restart" });
    const release = sb.sim.faults.hold({ verb: "create", resource: "events" });
    const agent = sb.spawnAgent();
    try {
      sb.setOsc(`apiVersion: extensions.gardener.cloud/v1alpha1\nkind: OperatingSystemConfig\nspec:\n  units:\n${units}`);
      await eventually("the ApplyFailed condition", applyFailed, { timeoutMs: 60_000, intervalMs: 25 });
      // The condition is written before the failure's Warning is recorded; the retry's restart of the
      // failing unit shows the first attempt (and its OSCApplyFailed event) has finished.
      const failingRestarts = () =>
        sb.systemd.actions.filter((a) => a.action === "Restart" && a.units.includes(unitName(UNITS - 1))).length;
      await eventually("the retried restart of the failing unit", failingRestarts, {
        until: (n) => n >= 2,
        timeoutMs: 60_000,
        intervalMs: 25,
      });
      release();
      const all = await eventually("the OSCApplyFailed event and the restart events", storedEvents, {
        until: (es) =>
          es.some((e) => e.reason === "OSCApplyFailed") &&
          es.filter((e) => e.type === "Normal" && e.reason === "SystemDUnitRestart").reduce((n, e) => n + e.count, 0) >= UNITS - 1,
        timeoutMs: 30_000,
        intervalMs: 25,
      });

      // The first event was already in flight when the hold began; the failure's Warnings come before the
      // Normal events that waited longer (retries of the apply may add Warnings later).
      const waited = all.slice(1);
      const firstNormal = waited.findIndex((e) => e.type === "Normal");
      const applyFailedAt = waited.findIndex((e) => e.reason === "OSCApplyFailed");
      expect(applyFailedAt).toBeGreaterThanOrEqual(0);
      expect(applyFailedAt).toBeLessThan(firstNormal);
      expect(waited[0]?.type).toBe("Warning");

      // 29 or more restart events (containerd's too): the one in flight, at most 10 single waiting ones and
      // one combined one.
      const restarts = all.filter((e) => e.type === "Normal" && e.reason === "SystemDUnitRestart");
      expect(restarts.length).toBeLessThanOrEqual(12);
      const combined = restarts.find((e) => e.message.startsWith("(combined from similar events): processed restart of unit "));
      expect(combined?.count).toBeGreaterThan(1);
      // aggregated, the burst fits the queue: nothing was dropped, and the counter says so
      const metrics = await (await fetch(`http://127.0.0.1:${sb.metricsPort}/metrics`)).text();
      expect(metrics).toContain("\ngardener_node_agent_events_dropped_total 0\n");
    } finally {
      release();
      await agent.stop();
    }
  }, 90_000);
});
