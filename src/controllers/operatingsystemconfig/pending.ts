import type { HostFs } from "../../host/index.ts";
import type { Osc, OscChanges } from "../../osc/index.ts";
import { injectEnvDropIn } from "./containerd/index.ts";
import { step } from "./context.ts";
import { resumeOrCompute } from "./diff.ts";
import { containerdConfigured } from "./merge.ts";
import { readChanges, readLastApplied } from "./state.ts";

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
 * The same planning path as the apply (apply.ts): env drop-in, last-applied, the persisted change set,
 * `resumeOrCompute`. Used by the hold gate's message and by `diff`.
 */
export async function pendingChanges(host: HostFs, input: Osc, checksum: string, hostName: string, processPath: string): Promise<PendingChanges> {
  const osc = containerdConfigured(input) ? injectEnvDropIn(input, processPath) : input;
  const lastApplied = await step("failed reading last applied operating system config", () => readLastApplied(host));
  const persisted = await step("failed reading last computed changes", () => readChanges(host));
  const { changes, resumed } = resumeOrCompute(persisted, lastApplied, osc, checksum, hostName.toLowerCase());
  return { osc, lastApplied, changes, resumed };
}
