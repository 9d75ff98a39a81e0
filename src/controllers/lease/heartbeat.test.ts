import { describe, expect, test } from "bun:test";
import { createMetricsRegistry } from "../../server/index.ts";
import { FakeClock } from "../../../test/doubles/fake-clock.ts";
import { LeaseHeartbeat, LeaseNotRenewedError } from "./heartbeat.ts";

describe("LeaseHeartbeat", () => {
  test("should be healthy at start and for exactly the lease duration after it", () => {
    const clock = new FakeClock();
    const hb = new LeaseHeartbeat(clock, 40);
    hb.check();
    clock.step(40_000);
    hb.check();
    clock.step(1);
    expect(() => hb.check()).toThrow(LeaseNotRenewedError);
  });
  test("should count the grace period from the first reconcile when that comes later", () => {
    const clock = new FakeClock();
    const hb = new LeaseHeartbeat(clock, 40);
    clock.step(60_000);
    hb.begin();
    clock.step(40_000);
    hb.check();
    hb.begin(); // only the first call counts
    clock.step(1);
    expect(() => hb.check()).toThrow(LeaseNotRenewedError);
  });
  test("should turn healthy again with the next renewal", () => {
    const clock = new FakeClock();
    const hb = new LeaseHeartbeat(clock, 40);
    clock.step(50_000);
    expect(() => hb.check()).toThrow("lease not renewed for 50s (longer than the lease duration of 40s)");
    hb.renewed(clock.now());
    hb.check();
    expect(hb.renewals).toBe(1);
  });
  test("should count renewals and expose the last renewal time as metrics", async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1, 0, 0, 0));
    const metrics = createMetricsRegistry();
    const hb = new LeaseHeartbeat(clock, 40, metrics);
    hb.renewed(clock.now());
    clock.step(10_500);
    hb.renewed(clock.now());
    const text = await metrics.render();
    expect(text).toContain("# TYPE gardener_node_agent_lease_renewals_total counter\ngardener_node_agent_lease_renewals_total 2\n");
    expect(text).toContain(
      "# TYPE gardener_node_agent_lease_last_renewal_timestamp_seconds gauge\ngardener_node_agent_lease_last_renewal_timestamp_seconds 1767225610.5\n",
    );
  });
});
