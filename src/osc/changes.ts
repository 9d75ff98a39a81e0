import * as v from "valibot";
import { issuesMessage } from "./decode.ts";
import { OscDecodeError } from "./errors.ts";
import { dropInSchema, fileSchema, registryConfigSchema, unitSchema } from "./schema.ts";
import { toPlain, writeYaml } from "./yaml-write.ts";
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

export const dropInsChangesSchema = v.object({ changed: list(dropInSchema), deleted: list(dropInSchema) });

export const changedUnitSchema = v.object({
  ...unitSchema.entries,
  dropInsChanges: section(dropInsChangesSchema.entries),
});
export type ChangedUnit = v.InferOutput<typeof changedUnitSchema>;

export const unitCommandSchema = v.object({ name: v.string(), command: v.optional(v.string(), "") });
export type UnitCommand = v.InferOutput<typeof unitCommandSchema>;

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
});

/** The pending work list of `last-computed-osc-changes.yaml` (lists always present in memory). */
export type OscChanges = v.InferOutput<typeof oscChangesSchema>;

/** A change set with nothing left to do. */
export function emptyChanges(checksum: string): OscChanges {
  return v.parse(oscChangesSchema, { operatingSystemConfigChecksum: checksum });
}

/** Decodes a changes file (ours or the Go agent's). */
export function decodeChanges(text: string): OscChanges {
  const raw = readYaml(text) ?? {};
  const res = v.safeParse(oscChangesSchema, raw);
  if (!res.success) throw new OscDecodeError(`invalid changes file: ${issuesMessage(res.issues)}`);
  return res.output;
}

/** Upstream's byte shape: sorted keys, empty lists omitted, `dropInsChanges` always present. */
export function encodeChanges(c: OscChanges): string {
  const units = {
    changed: c.units.changed.map((u) => ({ ...(toPlain(u) as object), dropInsChanges: toPlain(u.dropInsChanges) })),
    deleted: c.units.deleted,
    commands: c.units.commands,
  };
  return writeYaml(toPlain({ ...c, units }));
}
