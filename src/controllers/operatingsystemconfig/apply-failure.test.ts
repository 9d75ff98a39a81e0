import { describe, expect, test } from "bun:test";
import { RestartRequested, TerminalError } from "../../kube/index.ts";
import type { KubeObject } from "../../kube/index.ts";
import { StepError } from "../../log/index.ts";
import { useOscWorlds } from "../../../test/harness/osc-worlds.ts";
import { applyFailed } from "./apply-failure.ts";
import { OscInputError } from "./plan/input-error.ts";
import { LabelPatch } from "./input/label-patch.ts";
import type { ApplyRun } from "./report/reporter.ts";

const env = useOscWorlds();

/** An ApplyRun that records which failures were reported. */
function recordingRun() {
  const failed: unknown[] = [];
  const run: ApplyRun = {
    planned: () => {},
    historyAnnotations: () => ({}),
    hostApplied: async () => {},
    applied: async () => {},
    failed: async (_node, err) => void failed.push(err),
  };
  return { run, failed };
}

async function setUp() {
  const w = await env.world();
  const node = env.sim.store.get("nodes", "", w.nodeName) as KubeObject;
  const warnings = () =>
    w
      .events()
      .filter((e) => e["reason"] === "OSCApplyFailed")
      .map((e) => e["message"]);
  return { w, node, warnings, signal: AbortSignal.timeout(30_000) };
}

describe("applyFailed", () => {
  test("should report a failed step on the condition and as a Warning, and pass the error on", async () => {
    const { w, node, warnings, signal } = await setUp();
    const { run, failed } = recordingRun();
    const err = new StepError("failed applying changed files", new Error("disk full"));
    expect(await applyFailed(w.deps(), { run, labels: LabelPatch.none, reservations: [], node }, err, signal)).toBe(err);
    expect(failed).toEqual([err]);
    expect(warnings()).toEqual(["failed applying changed files: disk full"]);
  });

  test("should keep the condition Applying and send no Warning when the agent restarts to continue", async () => {
    const { w, node, warnings, signal } = await setUp();
    const { run, failed } = recordingRun();
    const err = new RestartRequested("gardener-node-agent unit or one of its files changed");
    expect(await applyFailed(w.deps(), { run, labels: LabelPatch.none, reservations: [], node }, err, signal)).toBe(err);
    expect(failed).toEqual([]);
    expect(warnings()).toEqual([]);
  });

  test("should pass the label patch's own failure on without a Warning (no apply was attempted)", async () => {
    const { w, node, warnings, signal } = await setUp();
    const { run } = recordingRun();
    const refused = new StepError("failed patching node labels", new Error("node patch refused"));
    const labels = LabelPatch.start(() => Promise.reject(refused));
    expect(await applyFailed(w.deps(), { run, labels, reservations: [], node }, refused, signal)).toBe(refused);
    expect(warnings()).toEqual([]);
  });

  test("should turn an OSC that can never be applied into a TerminalError", async () => {
    const { w, node, warnings, signal } = await setUp();
    const { run } = recordingRun();
    const err = new StepError(
      "failed validating operating system config",
      new OscInputError('file "relative/path": path is not absolute', "relative/path"),
    );
    const thrown = await applyFailed(w.deps(), { run, labels: LabelPatch.none, reservations: [], node }, err, signal);
    expect(thrown).toBeInstanceOf(TerminalError);
    expect((thrown as TerminalError).message).toBe('failed validating operating system config: file "relative/path": path is not absolute');
    expect(warnings()).toHaveLength(1);
  });
});
