import { afterEach, describe, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FakeClock } from "../../../../test/doubles/fake-clock.ts";
import { eventually } from "../../../../test/harness/eventually.ts";
import { createHostFs } from "../../../host/index.ts";
import type { Kube, KubeObject } from "../../../kube/index.ts";
import { nopLogger, StepError } from "../../../log/index.ts";
import type { EventRecorder } from "../../events.ts";
import { readApplyStatus } from "./apply-status.ts";
import type { OscMetrics } from "./metrics.ts";
import { OscReporter } from "./reporter.ts";

const roots: string[] = [];
afterEach(async () => {
  for (const r of roots.splice(0)) await rm(r, { recursive: true, force: true });
});

type Patch = { name: string; body: Record<string, unknown>; subresource: string | undefined };

/** Records node patches; the reporter uses no other Kube verb. */
function recordingKube(patches: Patch[]): Kube {
  const patch = async (_r: unknown, _ns: string, name: string, _t: string, body: Record<string, unknown>, o?: { subresource?: string }) => {
    patches.push({ name, body, subresource: o?.subresource });
    return {};
  };
  return { patch } as unknown as Kube;
}

async function setup() {
  const root = await mkdtemp(join(tmpdir(), "gna-report-"));
  roots.push(root);
  const patches: Patch[] = [];
  const events: { type: string; reason: string; note: string }[] = [];
  const recorder: EventRecorder = { event: async (_o, type, reason, _a, note) => void events.push({ type, reason, note }) };
  const gauges: Record<string, number> = {};
  const metrics: OscMetrics = {
    observeApply: (s, outcome) => void (gauges[`duration_${outcome}`] = s),
    appliedAt: (s) => void (gauges["appliedAt"] = s),
    upToDate: (b) => void (gauges["upToDate"] = b ? 1 : 0),
    held: (b) => void (gauges["held"] = b ? 1 : 0),
    gatesOpenToApplied: () => {},
    waiting: (reason) => void (gauges["waiting"] = reason === undefined ? 0 : 1),
  };
  const clock = new FakeClock(Date.UTC(2026, 10, 24, 10, 0, 0));
  const host = createHostFs(root);
  const reporter = new OscReporter(
    { kube: recordingKube(patches), host, clock, log: nopLogger, events: recorder, metrics },
    { namespace: "kube-system", name: "osc" },
  );
  return { reporter, patches, events, gauges, clock, host };
}

const node: KubeObject = { apiVersion: "v1", kind: "Node", metadata: { name: "n1", annotations: {} } };
const signal = new AbortController().signal;
const conditions = (patches: Patch[]) =>
  patches
    .filter((p) => p.subresource === "status")
    .map((p) => (p.body["status"] as { conditions: Record<string, string>[] }).conditions[0]);

describe("OscReporter", () => {
  describe("secretMissing", () => {
    test("should back off 5 s doubling to 5 min, warn once and patch the condition once", async () => {
      const { reporter, patches, events } = await setup();
      const delays: (number | undefined)[] = [];
      for (let i = 0; i < 8; i++) delays.push((await reporter.secretMissing(node, signal)).requeueAfterMs);
      expect(delays).toEqual([5_000, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000]);
      expect(events.map((e) => [e.type, e.reason])).toEqual([["Warning", "OSCSecretMissing"]]);
      expect(conditions(patches).map((c) => c?.["reason"])).toEqual(["SecretMissing"]);
    });
  });

  describe("report (a gate's hold)", () => {
    test("should record one Normal event per version and reason, and keep the gate's start", async () => {
      const { reporter, events, gauges, clock, host } = await setup();
      const hold = { reason: "Held" as const, message: "held: x", requeueAfterMs: 600_000 };
      expect(await reporter.report(node, "c1", hold, signal)).toEqual({ requeueAfterMs: 600_000 });
      clock.step(60_000);
      await reporter.report(node, "c1", hold, signal);
      expect(events.map((e) => [e.type, e.reason, e.note])).toEqual([["Normal", "Held", "held: x"]]);
      expect(gauges["held"]).toBe(1);
      expect(gauges["waiting"]).toBe(1);
      expect((await readApplyStatus(host))?.gate).toEqual({
        reason: "Held",
        message: "held: x",
        checksum: "c1",
        since: "2026-11-24T10:00:00Z",
      });
      await reporter.report(node, "c2", { ...hold, message: "held: y" }, signal);
      expect(events).toHaveLength(2);
    });
  });

  describe("startApply", () => {
    test("should report Applying, then ApplyFailed naming the step with a history entry, and keep ApplyFailed and its transition time through a retry", async () => {
      const { reporter, patches, gauges, clock, host } = await setup();
      const run = await reporter.startApply(node, "abcdef0123456789", signal);
      run.planned({ filesChanged: 2, filesDeleted: 0, unitsRestarted: ["a.service"] });
      clock.step(1_500);
      await run.failed(node, new StepError("failed applying changed files", new Error('cannot write "/etc/x"')), signal);
      const [applying, failed] = conditions(patches);
      expect(applying).toMatchObject({ status: "Unknown", reason: "Applying" });
      expect(failed).toMatchObject({
        status: "False",
        reason: "ApplyFailed",
        message: 'Applying operating system config abcdef012345 failed: failed applying changed files: cannot write "/etc/x"',
      });
      const history = patches.find((p) => p.subresource === undefined)?.body as { metadata: { annotations: Record<string, string> } };
      expect(JSON.parse(history.metadata.annotations["node-agent.gardener.cloud/apply-history"] ?? "")).toEqual([
        {
          checksum: "abcdef012345",
          start: "2026-11-24T10:00:00Z",
          durationMs: 1500,
          filesChanged: 2,
          filesDeleted: 0,
          unitsRestarted: ["a.service"],
          outcome: "Failed",
        },
      ]);
      expect(gauges["duration_failed"]).toBe(1.5);
      expect((await readApplyStatus(host))?.lastFailure?.failure).toEqual({
        step: "failed applying changed files",
        subject: "",
        message: 'failed applying changed files: cannot write "/etc/x"',
      });

      clock.step(60_000);
      const again = await reporter.startApply(node, "abcdef0123456789", signal);
      await again.failed(node, new Error("boom"), signal);
      // No Applying in between: the condition stays False since the first failure, with the new message.
      expect(conditions(patches).map((c) => c?.["reason"])).toEqual(["Applying", "ApplyFailed", "ApplyFailed"]);
      expect(conditions(patches).at(-1)).toMatchObject({
        message: "Applying operating system config abcdef012345 failed: boom",
        lastTransitionTime: "2026-11-24T10:00:01Z",
      });
    });

    test("should not flap through Applying when a gate inside the apply holds the same version again", async () => {
      const { reporter, patches, events } = await setup();
      const drain = { reason: "WaitingForDrain" as const, message: "waiting for drain", requeueAfterMs: 60_000 };
      for (let look = 0; look < 3; look++) {
        await reporter.startApply(node, "c1", signal);
        await reporter.report(node, "c1", drain, signal);
      }
      expect(conditions(patches).map((c) => c?.["reason"])).toEqual(["Applying", "WaitingForDrain"]);
      expect(events.map((e) => e.reason)).toEqual(["WaitingForDrain"]);
    });

    test("should say Applying again once a hold before the apply is released", async () => {
      const { reporter, patches } = await setup();
      await reporter.report(node, "c1", { reason: "Held", message: "held", requeueAfterMs: 1 }, signal);
      await reporter.startApply(node, "c1", signal);
      await reporter.report(node, "c1", { reason: "WaitingForDrain", message: "drain", requeueAfterMs: 1 }, signal);
      expect(conditions(patches).map((c) => c?.["reason"])).toEqual(["Held", "Applying", "WaitingForDrain"]);
    });

    test("should record the host apply, then say Applied (queued behind the reports before it); upToDate afterwards sends nothing", async () => {
      const { reporter, patches, gauges, host } = await setup();
      const run = await reporter.startApply(node, "c1", signal);
      await run.hostApplied();
      expect((await readApplyStatus(host))?.lastSuccess?.outcome).toBe("Applied");
      run.applied(node, signal);
      // Sent in the background (the next version's apply does not wait for it).
      await eventually("the Applied condition", () => conditions(patches).at(-1)?.["reason"] === "Applied", { intervalMs: 0 });
      const sent = patches.length;
      await reporter.upToDate(node, "c1", signal);
      expect(patches).toHaveLength(sent);
      expect(conditions(patches).at(-1)).toMatchObject({ status: "True", reason: "Applied" });
      expect(gauges["upToDate"]).toBe(1);
    });
  });
});
