import type { FileWrite, HostFs } from "../../../host/index.ts";
import { decodeChanges, encodeChanges, type OscChanges } from "../../../osc/index.ts";
import { changesPath } from "../constants.ts";

// One reader of last-applied-osc.yaml for all controllers (memoized decode): ../shared/last-applied.ts.
export { readLastApplied, readLastAppliedDigests, writeLastApplied } from "../../shared/index.ts";

/** The persisted change set (ours or the Go agent's), undefined when there is none. */
export async function readChanges(host: HostFs): Promise<OscChanges | undefined> {
  const text = await host.readText(changesPath);
  return text === undefined ? undefined : decodeChanges(text);
}

export async function writeChanges(host: HostFs, changes: OscChanges): Promise<void> {
  await host.writeFileAtomic(changesPath, encodeChanges(changes), 0o600);
}

/** The changes file as a member of a file group, encoded when the group writes its temp (in the store's queue). */
export function changesFileWrite(changes: OscChanges): FileWrite & { readonly data: () => string } {
  return { path: changesPath, data: () => encodeChanges(changes), mode: 0o600 };
}
