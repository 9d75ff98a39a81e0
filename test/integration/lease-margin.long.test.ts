// Issue 27, Lease margin, on the compiled agent with the production timings (40 s lease, renewal due
// every 10 s, a Lease request given up after 5 s, retries backing off by at most 2.5 s). Real time
// only: about 30 s for the hung PUT and 40 s for the storm, so this file belongs to `make test-long`
// (`*.long.test.ts`). The same cases on a stepped clock are in lease-controller.test.ts.
import { expect, test } from "bun:test";
import { useSandbox } from "../harness/sandbox-hooks.ts";
import type { Sandbox } from "../harness/sandbox.ts";
import { eventually } from "../harness/eventually.ts";

type Plain = Record<string, any>;

const startSandbox = useSandbox();
const leaseDurationMs = 40_000;
const timeoutMs = 90_000;

/** The agent renewing its Lease; every renewTime written is recorded (ms, the agent's clock). */
async function runningAgent(nodeName: string): Promise<{ sb: Sandbox; renewals: number[] }> {
  const sb = await startSandbox({ nodeName });
  const renewals: number[] = [];
  // Ends with the simulator, which the hook stops (with the agent) after the test.
  sb.sim.store.subscribe((e) => {
    if (e.def.resource === "leases" && (e.object["metadata"] as Plain)["name"] === `gardener-node-agent-${nodeName}`)
      renewals.push(Date.parse((e.object["spec"] as Plain)["renewTime"]));
  });
  sb.spawnAgent();
  await eventually("the first renewal", () => renewals.length, { until: (n) => n >= 1, timeoutMs: 30_000 });
  return { sb, renewals };
}

const gaps = (times: readonly number[]): number[] => times.slice(1).map((t, i) => t - (times[i] ?? t));

test(
  "one hung Lease PUT: given up after 5 s and retried, the largest gap between renewals stays under 25 s",
  async () => {
    const { sb, renewals } = await runningAgent("margin-hang");
    sb.sim.faults.hangNext(1, { verb: "update", resource: "leases" });
    await eventually("the PUT to hang", () => sb.sim.faults.held, { until: (n) => n === 1, timeoutMs: 15_000 });
    const hungAt = Date.now();
    await eventually("the renewal after the hang", () => renewals.length, { until: (n) => n >= 2, timeoutMs: 30_000 });
    // the agent gave up (the simulator answered the hung request only when the client went away)
    const givenUp = sb.sim.requests.filter((r) => r.resource === "leases" && r.verb === "update" && r.code === 504);
    expect(givenUp).toHaveLength(1);
    expect(renewals[1] ?? 0).toBeGreaterThanOrEqual(hungAt + 4_900); // not before the 5 s deadline
    await eventually("the next regular renewal", () => renewals.length, { until: (n) => n >= 3, timeoutMs: 30_000 });

    const [afterHang, regular] = gaps(renewals);
    expect(afterHang).toBeGreaterThanOrEqual(15_000);
    expect(Math.max(...gaps(renewals))).toBeLessThan(25_000);
    expect(regular).toBeGreaterThanOrEqual(10_000);
    expect(regular).toBeLessThan(10_500);
  },
  timeoutMs,
);

test(
  "a 25 s storm of 500s: the next renewal follows within 2.5 s of its end, inside the 40 s lease",
  async () => {
    const { sb, renewals } = await runningAgent("margin-storm");
    sb.sim.faults.failNext(1_000_000, { resource: "leases", status: 500 });
    const failedAt = () => sb.sim.requests.filter((r) => r.resource === "leases" && r.code === 500).map((r) => r.time);
    const first = await eventually("the first failed renewal", () => failedAt()[0], { timeoutMs: 15_000 });
    // The worst moment to end it: just after a failed attempt 25 s into the storm, so the next
    // attempt is a whole backoff away.
    await eventually("a failed attempt 25 s into the storm", () => failedAt().at(-1) ?? 0, {
      until: (t) => t >= first + 25_000,
      timeoutMs: 40_000,
      intervalMs: 1,
    });
    await sb.sim.faults.clear();
    const stormEnd = Date.now();
    await eventually("the renewal after the storm", () => renewals.length, { until: (n) => n >= 2, timeoutMs: 15_000 });

    expect(failedAt().length).toBeGreaterThanOrEqual(15); // backoff 5 ms … 2.5 s, then every 2.5 s
    const after = renewals[1] ?? Number.NaN;
    expect(after - stormEnd).toBeLessThanOrEqual(2_500 + 500); // the cap, plus a loaded machine's slack
    expect(Math.max(...gaps(renewals))).toBeLessThan(leaseDurationMs);
  },
  timeoutMs,
);
