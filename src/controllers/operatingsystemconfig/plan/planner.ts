import type { HostFs } from "../../../host/index.ts";
import { isDigested, type Osc, type OscChanges } from "../../../osc/index.ts";
import { step } from "../../../log/index.ts";
import { resumeOrCompute } from "./diff.ts";
import { injectEnvDropIn } from "./env-dropin.ts";
import { resumeOrComputeWithLeftovers } from "./leftovers.ts";
import { containerdConfigured } from "./merge.ts";
import { readChanges, readLastApplied, readLastAppliedDigests } from "./state.ts";
import { checkSupportedFields } from "./supported.ts";

/** What a feature's planning step sees (the in-place flags are filled in this way). */
export interface PlanInput {
  readonly host: HostFs;
  /** A big one's file inline data are digests (readLastAppliedDigests): a hook that needs contents reads them. */
  readonly lastApplied: Osc | undefined;
  readonly osc: Osc;
  /** Changed in place by the hook: in look mode a copy, in apply mode the set the apply works through. */
  readonly changes: OscChanges;
  readonly resumed: boolean;
}

/** A feature's part in planning (read-only on the host). */
export interface PlanHook {
  plan?(p: PlanInput): Promise<void>;
}

/** What the next apply of `osc` works through, read from the state files only (nothing written). */
export interface PlannedChanges {
  /** The OSC as the apply sees it (containerd's env drop-in added when containerd is configured). */
  readonly osc: Osc;
  /** A big one's file inline data are digests (readLastAppliedDigests). */
  readonly lastApplied: Osc | undefined;
  readonly changes: OscChanges;
  /** The change set comes from the changes file (an interrupted apply of the same checksum). */
  readonly resumed: boolean;
}

export interface PlanRequest {
  readonly osc: Osc;
  readonly checksum: string;
  readonly hostName: string;
  /** The agent's PATH, for containerd's env drop-in. */
  readonly processPath: string;
}

/**
 * The one planning path (§4 steps 7-11). `apply` adds leftovers and resumes the persisted object itself;
 * `look` (hold message, `diff`) plans on a copy without leftovers (osc-pipeline.md 3.7: kept as it was).
 */
export async function planChangeSet(
  host: HostFs,
  req: PlanRequest,
  hooks: readonly PlanHook[],
  mode: "apply" | "look",
): Promise<PlannedChanges> {
  const osc = containerdConfigured(req.osc) ? injectEnvDropIn(req.osc, req.processPath) : req.osc;
  await step("failed checking operating system config", async () => checkSupportedFields(osc));
  const lastApplied = await step("failed reading last applied operating system config", () => readLastAppliedDigests(host));
  const persisted = await step("failed reading last computed changes", () => readChanges(host));
  const hostName = req.hostName.toLowerCase();
  const { changes, resumed } =
    mode === "apply"
      ? resumeOrComputeWithLeftovers(persisted, lastApplied, osc, req.checksum, hostName)
      : resumeOrCompute(persisted === undefined ? undefined : structuredClone(persisted), lastApplied, osc, req.checksum, hostName);
  if (changes.files.deleted.some(isDigested))
    await step("failed reading last applied operating system config", () => withDeletedContents(host, changes));
  await step("failed planning in-place updates", async () => {
    for (const h of hooks) await h.plan?.({ host, lastApplied, osc, changes, resumed });
  });
  return { osc, lastApplied, changes, resumed };
}

/**
 * The change set records deleted files as they were (upstream's changes file carries their content): a
 * digested last-applied OSC has only digests, so their entries are taken from the file itself.
 */
async function withDeletedContents(host: HostFs, changes: OscChanges): Promise<void> {
  const full = await readLastApplied(host);
  const byPath = new Map([...(full?.spec.files ?? []), ...(full?.status.extensionFiles ?? [])].map((f) => [f.path, f]));
  changes.files.deleted = changes.files.deleted.map((f) => (isDigested(f) ? (byPath.get(f.path) ?? f) : f));
}
