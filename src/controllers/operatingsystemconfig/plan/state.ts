import type { ChunkedData, FileWrite, HostFs } from "../../../host/index.ts";
import { decodeChanges, encodeChangesChunked, type OscChanges } from "../../../osc/index.ts";
import { changesPath } from "../constants.ts";

// One reader of last-applied-osc.yaml for all controllers (memoized decode): ../shared/last-applied.ts.
export { readLastApplied, readLastAppliedDigests, writeLastApplied } from "../../shared/index.ts";

/**
 * The persisted change set (ours or the Go agent's), undefined when there is none. Its bytes are decoded as
 * they are: the YAML reader scans bytes in place, a text would first be encoded again (a big OSC's change
 * set is tens of megabytes).
 */
export async function readChanges(host: HostFs): Promise<OscChanges | undefined> {
  const bytes = await host.readFile(changesPath);
  return bytes === undefined ? undefined : decodeChanges(bytes);
}

/** Writes the change set (atomically), encoded chunk by chunk into the file: no text of it is held (issue 27). */
export async function writeChanges(host: HostFs, changes: OscChanges): Promise<void> {
  await host.writeFileAtomic(changesPath, encodeChangesChunked(changes), 0o600);
}

/** The changes file as a member of a file group (its document taken now, encoded while the group writes it). */
export function changesFileWrite(changes: OscChanges): FileWrite & { readonly data: ChunkedData } {
  return { path: changesPath, data: encodeChangesChunked(changes), mode: 0o600 };
}
