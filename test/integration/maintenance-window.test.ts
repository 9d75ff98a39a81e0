// The maintenance window gate (issue 26) in-process against the API-server simulator, on an injected clock:
// windows are minute-granular, so the opening and the closing are stepped to, not waited for.
import { describe, expect, test } from "bun:test";
import type { Plain } from "../fixtures/osc/acceptance-osc.ts";
import type { OscWorld } from "../fixtures/osc/harness.ts";
import { FakeClock } from "../doubles/fake-clock.ts";
import { useOscWorlds } from "../harness/osc-worlds.ts";

const env = useOscWorlds();

const osc = (greeting: string): Plain => ({
  apiVersion: "extensions.gardener.cloud/v1alpha1",
  kind: "OperatingSystemConfig",
  spec: {
    files: [{ path: "/etc/demo/hello", permissions: 0o644, content: { inline: { data: greeting } } }],
    units: [{ name: "demo.service", content: "[Service]\nExecStart=/bin/true\n", filePaths: ["/etc/demo/hello"] }],
  },
});

const window = "Mon-Fri 02:00-04:00 Europe/Berlin";
const annotate = (w: OscWorld, value: string) =>
  env.sim.store.patch("nodes", "", w.nodeName, "merge", {
    metadata: { annotations: { "node-agent.gardener.cloud/maintenance-window": value } },
  });
const nodeChecksum = (w: OscWorld) => w.node()["metadata"]?.annotations?.["checksum/cloud-config-data"];
const condition = (w: OscWorld) =>
  (w.node()["status"]?.conditions as Plain[] | undefined)?.find((c) => c["type"] === "OperatingSystemConfigApplied");
const restarts = (w: OscWorld) => w.actions().filter((a) => a === "Restart demo.service").length;

/** A node that applied `hello` (outside any window: no annotation yet), now carrying the window. */
async function appliedWorld(clock: FakeClock): Promise<OscWorld> {
  const w = await env.world();
  w.setOsc(osc("hello"));
  expect(await w.reconcile({ clock })).toEqual({ requeueAfterMs: 600_000 });
  annotate(w, window);
  return w;
}

describe("maintenance window (injected clock)", () => {
  test("a disruptive change arriving ten seconds before the window waits for it and applies when it opens", async () => {
    // Monday 30 November 2026, 01:59:50 in Berlin (CET, UTC+1).
    const clock = new FakeClock(Date.parse("2026-11-30T00:59:50Z"));
    const w = await appliedWorld(clock);
    const sum = w.setOsc(osc("hello again"));
    expect(await w.reconcile({ clock })).toEqual({ requeueAfterMs: 10_000 });
    expect(condition(w)).toMatchObject({
      status: "False",
      reason: "WaitingForMaintenanceWindow",
      message: `Waiting for the maintenance window (node-agent.gardener.cloud/maintenance-window: ${window}), next opening Mon 2026-11-30 02:00 Europe/Berlin (2026-11-30T01:00:00Z); operating system config ${sum.slice(0, 12)} restarts demo.service`,
    });
    expect(await w.text("/etc/demo/hello")).toBe("hello");
    expect(restarts(w)).toBe(1);

    clock.step(9_999);
    expect(await w.reconcile({ clock })).toEqual({ requeueAfterMs: 1 });
    clock.step(1);
    expect(await w.reconcile({ clock })).toEqual({ requeueAfterMs: 600_000 });
    expect(nodeChecksum(w)).toBe(sum);
    expect(await w.text("/etc/demo/hello")).toBe("hello again");
    expect(restarts(w)).toBe(2);
    // One event for the wait of this version.
    expect(w.events().filter((e) => e["reason"] === "WaitingForMaintenanceWindow")).toHaveLength(1);
  });

  test("an apply that started inside the window finishes after it closed; a new version then waits again", async () => {
    // Friday 4 December 2026, 03:59 in Berlin: a minute of the window left.
    const clock = new FakeClock(Date.parse("2026-12-04T02:59:00Z"));
    const w = await appliedWorld(clock);
    const sum = w.setOsc(osc("started inside"));
    w.systemd.failNextJob("demo.service");
    await expect(w.reconcile({ clock })).rejects.toThrow("restart failed for demo.service");
    expect(await w.text("/etc/demo/hello")).toBe("started inside");

    clock.step(120_000); // 04:01: closed
    expect(await w.reconcile({ clock })).toEqual({ requeueAfterMs: 600_000 });
    expect(nodeChecksum(w)).toBe(sum);

    const later = w.setOsc(osc("after the window"));
    const held = await w.reconcile({ clock });
    // Next opening: Monday 7 December, 02:00 CET.
    expect(held.requeueAfterMs).toBe(600_000); // looked at again at least every sync period
    expect(condition(w)?.["message"]).toContain("next opening Mon 2026-12-07 02:00 Europe/Berlin (2026-12-07T01:00:00Z)");
    expect(nodeChecksum(w)).not.toBe(later);
  });

  test("a change of the window annotation to one open now ends the wait", async () => {
    const clock = new FakeClock(Date.parse("2026-11-28T12:00:00Z")); // Saturday
    const w = await appliedWorld(clock);
    const sum = w.setOsc(osc("weekend"));
    expect((await w.reconcile({ clock })).requeueAfterMs).toBe(600_000);
    expect(condition(w)?.["reason"]).toBe("WaitingForMaintenanceWindow");
    annotate(w, "Sat 11:00-13:00 UTC");
    expect(await w.reconcile({ clock })).toEqual({ requeueAfterMs: 600_000 });
    expect(nodeChecksum(w)).toBe(sum);
  });
});
