import type { HostFs } from "../../../host/index.ts";
import type { Osc, OscChanges } from "../../../osc/index.ts";
import { injectEnvDropIn } from "../apply/containerd/index.ts";
import { step } from "../apply/context.ts";
import { resumeOrCompute } from "./diff.ts";
import { planInPlace } from "../features/inplace/index.ts";
import { containerdConfigured } from "./merge.ts";
import { readChanges, readLastApplied } from "./state.ts";
import { checkSupportedFields } from "./supported.ts";

/** What the next apply of `osc` would work through, read from the state files only (nothing written). */
export interface PendingChanges {
  /** The OSC as the apply sees it (containerd's env drop-in added when containerd is configured). */
  readonly osc: Osc;
  readonly lastApplied: Osc | undefined;
  readonly changes: OscChanges;
  /** The change set comes from the changes file (an interrupted apply of the same checksum). */
  readonly resumed: boolean;
}

/**
 * The same planning path as the apply (apply.ts `planApply`): env drop-in, supported fields,
 * last-applied, the persisted change set, `resumeOrCompute`, in-place flags. Used by the hold gate's
 * message and by `diff`; keep it in step with `planApply`.
 */
export async function pendingChanges(
  host: HostFs,
  input: Osc,
  checksum: string,
  hostName: string,
  processPath: string,
): Promise<PendingChanges> {
  const osc = containerdConfigured(input) ? injectEnvDropIn(input, processPath) : input;
  await step("failed checking operating system config", async () => checkSupportedFields(osc));
  const lastApplied = await step("failed reading last applied operating system config", () => readLastApplied(host));
  const persisted = await step("failed reading last computed changes", () => readChanges(host));
  // A resumed change set is the persisted object: plan in-place flags on a copy, nothing here may change it.
  const { changes, resumed } = resumeOrCompute(
    persisted === undefined ? undefined : structuredClone(persisted),
    lastApplied,
    osc,
    checksum,
    hostName.toLowerCase(),
  );
  await step("failed planning in-place updates", () => planInPlace({ host }, lastApplied, osc, changes, resumed));
  return { osc, lastApplied, changes, resumed };
}
