import type { KubeObject } from "../../../../kube/index.ts";
import type { HostFs } from "../../../../host/index.ts";
import type { Gate, GateHold } from "../../gates/gate.ts";
import { readChanges } from "../../plan/state.ts";

const unitFailurePolicyAnnotation = "node-agent.gardener.cloud/unit-failure-policy";
export const unitRevertedReason = "UnitReverted";
export const defaultUnitVerification = { windowMs: 30_000, pollMs: 1_000 } as const;

export type UnitFailurePolicy = "retry" | "revert";

/** `revert` only when the Node asks for it; the default keeps upstream's retry with backoff. */
export function unitFailurePolicyOf(node: KubeObject): UnitFailurePolicy {
  return node.metadata.annotations?.[unitFailurePolicyAnnotation] === "revert" ? "revert" : "retry";
}

const revertMessage = (units: readonly string[], checksum: string): string =>
  `unit(s) ${units.join(", ")} failed after the restart and were reverted to the last-applied configuration; ` +
  `operating system config ${checksum} is not retried until its Secret changes or the ${unitFailurePolicyAnnotation} annotation is removed`;

/** The condition's False/UnitReverted: the hold of a version whose failed units were reverted. */
export const revertHold = (windowMs: number, units: readonly string[], checksum: string): GateHold => ({
  reason: unitRevertedReason,
  message: revertMessage(units, checksum),
  requeueAfterMs: windowMs,
});

/** A reverted version is not applied again while the Node still asks for `revert`; looked at again after the window. */
export const unitRevertGate = (d: {
  readonly host: HostFs;
  readonly unitVerification?: { readonly windowMs: number } | undefined;
}): Gate => ({
  name: "unit-revert",
  phase: "admit",
  async decide(ctx) {
    const node = ctx.node;
    if (node === undefined || unitFailurePolicyOf(node) !== "revert") return { kind: "proceed" };
    const persisted = await readChanges(d.host);
    const units = persisted?.operatingSystemConfigChecksum === ctx.checksum ? (persisted.unitRevert?.units ?? []) : [];
    return units.length === 0
      ? { kind: "proceed" }
      : { kind: "hold", hold: revertHold((d.unitVerification ?? defaultUnitVerification).windowMs, units, ctx.checksum) };
  },
});
