import { describe, expect, test } from "bun:test";
import { StepError } from "../../../log/index.ts";
import { testGateContext } from "../../../../test/harness/gate-context.ts";
import type { Decision, Gate, GateHold, GateName, GatePhase, Reserved } from "./gate.ts";
import { previewGateList } from "../preview/gates.ts";
import { abandonReserved, admit, firstHold, releaseReserved, verifyReserved } from "./run.ts";

const hold = (reason: GateHold["reason"], message: string = reason): GateHold => ({ reason, message, requeueAfterMs: 1 });
const ctx = testGateContext;

/** A gate that records each call in `calls` and answers with `decision` (and `reserved`, when given). */
function gate(name: GateName, phase: GatePhase, calls: string[], decision: Decision, reserved?: Reserved, extra: Partial<Gate> = {}): Gate {
  return {
    name,
    phase,
    ...extra,
    decide: async () => {
      calls.push(`${name}.decide`);
      return decision;
    },
    ...(reserved === undefined
      ? {}
      : {
          reserve: async () => {
            calls.push(`${name}.reserve`);
            return reserved;
          },
        }),
  };
}

describe("the gate phases", () => {
  test("should run the admit gates in list order, reserve instead of decide, and stop at the first hold", async () => {
    const calls: string[] = [];
    const gates = [
      gate("hold", "admit", calls, { kind: "proceed" }),
      gate("drain", "plan", calls, { kind: "hold", hold: hold("WaitingForDrain") }),
      gate("serial-lock", "admit", calls, { kind: "proceed" }, { kind: "reserved", reservation: {} }),
      gate("rollout", "admit", calls, { kind: "proceed" }, { kind: "hold", hold: hold("WaitingForRolloutSlot") }),
      gate("static-pods", "admit", calls, { kind: "proceed" }),
    ];
    expect(await admit(gates, ctx())).toEqual({ kind: "hold", hold: hold("WaitingForRolloutSlot") });
    expect(calls).toEqual(["hold.decide", "serial-lock.reserve", "rollout.reserve"]);
  });

  test("should go with what the admit gates reserved", async () => {
    const lease = { release: async () => {} };
    const gates = [gate("serial-lock", "admit", [], { kind: "proceed" }, { kind: "reserved", reservation: lease })];
    expect(await admit(gates, ctx())).toEqual({ kind: "go", reservations: [lease] });
  });

  test("should label a gate's failure with its step", async () => {
    const failing: Gate = {
      name: "serial-lock",
      phase: "admit",
      step: "failed acquiring serial reconciliation lock",
      decide: () => Promise.reject(new Error("refused")),
    };
    const err = await admit([failing], ctx()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StepError);
    expect((err as Error).message).toBe("failed acquiring serial reconciliation lock: refused");
  });

  test("should run only the asked phase in firstHold", async () => {
    const calls: string[] = [];
    const gates = [
      gate("hold", "admit", calls, { kind: "hold", hold: hold("Held") }),
      gate("static-pods", "record", calls, { kind: "hold", hold: hold("WaitingForStaticPods") }),
    ];
    expect(await firstHold(gates, "plan", ctx())).toBeUndefined();
    expect(await firstHold(gates, "record", ctx())).toEqual(hold("WaitingForStaticPods"));
    expect(calls).toEqual(["static-pods.decide"]);
  });

  test("should verify, abandon and release every reservation in order, first verify hold wins", async () => {
    const calls: string[] = [];
    const node = { metadata: { name: "n" } };
    const signal = new AbortController().signal;
    const reservations = [
      { verify: async () => (calls.push("a.verify"), undefined), release: async () => void calls.push("a.release") },
      { verify: async () => (calls.push("b.verify"), hold("VerifyingRollout")), abandon: async () => void calls.push("b.abandon") },
      { verify: async () => (calls.push("c.verify"), undefined) },
    ];
    expect(await verifyReserved(reservations, node, signal)).toEqual(hold("VerifyingRollout"));
    await abandonReserved(reservations, new Error("x"), node, signal);
    await releaseReserved(reservations, signal);
    expect(calls).toEqual(["a.verify", "b.verify", "b.abandon", "a.release"]);
  });
});

describe("previewGateList", () => {
  test("should map each decision to what diff shows, unit-revert included, and not ask the online gates offline", async () => {
    const calls: string[] = [];
    const gates = [
      gate("hold", "admit", calls, { kind: "hold", hold: hold("Held", "held") }, undefined, { online: true }),
      gate("unit-revert", "admit", calls, { kind: "hold", hold: hold("UnitReverted") }),
      gate("rollout", "admit", calls, { kind: "proceed", note: { reason: "VerifyingRollout", message: "verifies" } }),
      gate("drain", "plan", calls, { kind: "hold", hold: hold("WaitingForDrain", "drain") }),
      gate("static-pods", "record", calls, { kind: "hold", hold: hold("WaitingForStaticPods", "pods") }),
    ];
    expect(await previewGateList(gates, ctx({ dryRun: true, online: false }))).toEqual([
      { gate: "hold", verdict: "not-checked", message: "not checked (offline)" },
      { gate: "unit-revert", verdict: "stops", reason: "UnitReverted", message: "UnitReverted" },
      { gate: "rollout", verdict: "after-apply", reason: "VerifyingRollout", message: "verifies" },
      { gate: "drain", verdict: "stops", reason: "WaitingForDrain", message: "drain" },
      { gate: "static-pods", verdict: "after-apply", reason: "WaitingForStaticPods", message: "pods" },
    ]);
    expect(calls).toEqual(["unit-revert.decide", "rollout.decide", "drain.decide", "static-pods.decide"]);
  });

  test("should show a gate that cannot look or cannot read as not checked", async () => {
    const gates: Gate[] = [
      gate("static-pods", "record", [], { kind: "unknown", why: "not checked (no Node yet): …" }),
      { name: "serial-lock", phase: "admit", decide: () => Promise.reject(new Error("leases is forbidden")) },
    ];
    expect(await previewGateList(gates, ctx({ dryRun: true }))).toEqual([
      { gate: "static-pods", verdict: "not-checked", message: "not checked (no Node yet): …" },
      { gate: "serial-lock", verdict: "not-checked", message: "not checked: leases is forbidden" },
    ]);
  });
});
