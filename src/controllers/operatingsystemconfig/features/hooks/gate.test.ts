import { describe, expect, test } from "bun:test";
import type { Kube, KubeObject } from "../../../../kube/index.ts";
import { testGateContext } from "../../../../../test/harness/gate-context.ts";
import { disruptionHooksAnnotation, disruptionHooksGate, hookAnswer, hookVersion, parseHooks } from "./gate.ts";

const c = hookVersion("0123456789abcdef0123");
const nodeWith = (value: string): KubeObject => ({ metadata: { name: "n", annotations: { [disruptionHooksAnnotation]: value } } });

describe("hook answers", () => {
  test("the version is the checksum's first 12 hex digits", () => {
    expect(c).toBe("0123456789ab");
  });

  test.each([
    [`approved ${c}`, { kind: "approved" }],
    [` approved ${c} `, { kind: "approved" }],
    [`denied ${c}: backup runs`, { kind: "denied", text: "backup runs" }],
    [`denied ${c}`, { kind: "denied", text: "" }],
    [`requested ${c}`, { kind: "pending" }],
    [`done ${c}`, { kind: "pending" }],
    // Stale: an answer about another version does not count.
    ["approved 111111111111", { kind: "pending" }],
    ["denied 111111111111: old", { kind: "pending" }],
    [`approved ${c}0`, { kind: "pending" }],
    ["", { kind: "pending" }],
  ])("%p", (value, want) => {
    expect(hookAnswer(value, c)).toEqual(want as ReturnType<typeof hookAnswer>);
  });
});

describe("parseHooks", () => {
  test("trims, drops empty entries and duplicates", () => {
    expect(parseHooks(nodeWith(" db, backup,,db "))).toEqual({ names: ["db", "backup"], invalid: [] });
  });

  test("names that cannot follow the annotation prefix are reported by their position in the list, not skipped", () => {
    expect(parseHooks(nodeWith("db,-x,,a/b"))).toEqual({ names: ["db"], invalid: [2, 4] });
  });

  test("no annotation, no hooks", () => {
    expect(parseHooks({ metadata: { name: "n" } })).toEqual({ names: [], invalid: [] });
    expect(parseHooks(undefined)).toEqual({ names: [], invalid: [] });
  });
});

describe("disruptionHooksGate", () => {
  test("a name that cannot be an annotation key holds the disruptive apply, named by its position, never its text", async () => {
    const gate = disruptionHooksGate({ kube: {} as Kube, syncPeriodMs: 1000 });
    const d = await gate.decide(
      testGateContext({
        checksum: "0123456789abcdef0123",
        node: nodeWith("db, bad/hook-secret,,-x"),
        disruption: async () => ({ disruptive: true, text: "restarts kubelet.service", units: 1 }),
        dryRun: true,
      }),
    );
    expect(d).toEqual({
      kind: "hold",
      hold: {
        reason: "WaitingForDisruptionApproval",
        message: `Node annotation ${disruptionHooksAnnotation}: entries 2, 4 of the comma-separated list cannot be an annotation name (63 characters of letters, digits, "-", "_" and ".", alphanumeric at both ends)`,
        requeueAfterMs: 1000,
      },
    });
  });
});
