import * as v from "valibot";
import { issuesMessage } from "./decode.ts";
import { OscDecodeError } from "./errors.ts";
import { dropInSchema, fileSchema, registryConfigSchema, unitSchema } from "./schema.ts";
import type { ChunkedText } from "./yaml-write-fast.ts";
import { streamYaml, toPlain, writeYaml } from "./yaml-write.ts";
import { readYaml } from "./yaml-read.ts";

// Missing and null both mean "empty"/false, like Go's zero values.
const list = <S extends v.GenericSchema>(item: S) =>
  v.optional(
    v.pipe(
      v.nullable(v.array(item)),
      v.transform((a): v.InferOutput<S>[] => a ?? []),
    ),
    () => [],
  );
const flag = v.optional(
  v.pipe(
    v.nullable(v.boolean()),
    v.transform((b) => b ?? false),
  ),
  false,
);
const section = <E extends v.ObjectEntries>(entries: E) => {
  const s = v.object(entries);
  return v.optional(
    v.pipe(
      v.nullable(s),
      v.transform((x) => x ?? v.parse(s, {})),
    ),
    () => v.parse(s, {}),
  );
};

const dropInsChangesSchema = v.object({ changed: list(dropInSchema), deleted: list(dropInSchema) });

export const changedUnitSchema = v.object({
  ...unitSchema.entries,
  dropInsChanges: section(dropInsChangesSchema.entries),
});
export type ChangedUnit = v.InferOutput<typeof changedUnitSchema>;

const unitCommandSchema = v.object({ name: v.string(), command: v.optional(v.string(), "") });

/**
 * This agent's addition to the changes file (gardener#10972): every file path and unit a change set
 * set out to write, kept until an apply completes, so the next OSC removes what an unfinished one left
 * behind. The Go agent ignores the unknown key; without it (a Go-written file) nothing is carried over.
 */
export const attemptedWritesSchema = v.object({ files: list(v.object({ path: v.string() })), units: list(unitSchema) });
export type AttemptedWrites = v.InferOutput<typeof attemptedWritesSchema>;

export const oscChangesSchema = v.object({
  operatingSystemConfigChecksum: v.optional(v.string(), ""),
  mustRestartNodeAgent: flag,
  files: section({ changed: list(fileSchema), deleted: list(fileSchema) }),
  units: section({ changed: list(changedUnitSchema), deleted: list(unitSchema), commands: list(unitCommandSchema) }),
  containerd: section({
    configFileChanged: flag,
    registries: section({
      upstreamsToProbe: list(v.string()),
      desired: list(registryConfigSchema),
      deleted: list(registryConfigSchema),
    }),
  }),
  inPlaceUpdates: section({
    operatingSystem: flag,
    kubelet: section({ minorVersion: flag, config: flag, cpuManagerPolicy: flag }),
    certificateAuthoritiesRotation: section({ kubelet: flag, nodeAgent: flag }),
    serviceAccountKeyRotation: flag,
    /**
     * Our addition (the Go agent ignores unknown keys): where the OS update command stands, so a
     * restarted agent tells an interrupted command or a pending reboot from a rollback. Absent when
     * no update is under way, which keeps the upstream bytes of a finished change set.
     */
    operatingSystemUpdate: v.optional(
      v.nullable(
        v.object({ bootID: v.optional(v.string(), ""), state: v.optional(v.picklist(["running", "succeeded", "failed"]), "running") }),
      ),
    ),
  }),
  attemptedWrites: v.optional(attemptedWritesSchema),
  /**
   * This agent's addition: units whose restart failed within the verification window and that were
   * reverted; the change set holding their new version is not retried while the Node asks for
   * `unit-failure-policy: revert` (the Go agent ignores the key and simply retries the change set).
   */
  unitRevert: v.optional(v.object({ units: list(v.string()) })),
});

/** The pending work list of `last-computed-osc-changes.yaml` (lists always present in memory). */
export type OscChanges = v.InferOutput<typeof oscChangesSchema>;

/** A change set with nothing left to do. */
export function emptyChanges(checksum: string): OscChanges {
  return v.parse(oscChangesSchema, { operatingSystemConfigChecksum: checksum });
}

/** Decodes a changes file (ours or the Go agent's), given as UTF-8 bytes (as read) or text. */
export function decodeChanges(text: string | Uint8Array): OscChanges {
  const raw = readYaml(text) ?? {};
  const res = v.safeParse(oscChangesSchema, raw);
  if (!res.success) throw new OscDecodeError(`invalid changes file: ${issuesMessage(res.issues)}`);
  return res.output;
}

/** Upstream's byte shape: sorted keys, empty lists omitted, `dropInsChanges` always present. */
export function encodeChanges(c: OscChanges): string {
  return writeYaml(plainChanges(c));
}

/**
 * `encodeChanges(c)`'s bytes, pushed out a chunk at a time when written (issue 27: the first apply of
 * a 20 MB OSC records every file's content, and its text, lines and encoded copy were 40–60 MB at
 * once). Taken now: `c` may change before the write.
 */
export function encodeChangesChunked(c: OscChanges): ChunkedText {
  return streamYaml(plainChanges(c), changesEncodedSize);
}

/** The change set's length when last encoded: the size of the next encode's buffer (one process writes one record). */
const changesEncodedSize = { bytes: 0 };

/** The document encodeChanges writes: a copy of `c` (toPlain copies every object and list). */
function plainChanges(c: OscChanges): unknown {
  const { attemptedWrites, ...upstreamFields } = c;
  const units = {
    changed: c.units.changed.map((u) => ({ ...(toPlain(u) as object), dropInsChanges: toPlain(u.dropInsChanges) })),
    deleted: c.units.deleted,
    commands: c.units.commands,
  };
  // Present only while it lists something, so a finished change set reads exactly like upstream's.
  const attempted =
    attemptedWrites !== undefined && (attemptedWrites.files.length > 0 || attemptedWrites.units.length > 0) ? { attemptedWrites } : {};
  return toPlain({ ...upstreamFields, units, ...attempted });
}
