import * as v from "valibot";
import { issuesMessage, readYaml } from "../../osc/index.ts";
import { errorText } from "../../log/index.ts";

/**
 * The view of `last-applied-osc.yaml` the checker works on. Upstream decodes the file with a generic
 * YAML library into the Go types, which have only JSON tags, so the keys it sees are the lower-cased
 * Go field names: `dropins`, `filepaths`, `imageref`. A file written by the agent (JSON names
 * `dropIns`, `filePaths`, `imageRef`) therefore has no drop-ins, dependencies or image references
 * in this view. That is replicated on purpose so both agents emit the same events (spec §7.6).
 */

/** Go's YAML decoder stores any scalar into a string field. */
const goString = v.pipe(
  v.union([v.string(), v.number(), v.boolean()]),
  v.transform((s) => String(s)),
);
const optString = v.optional(v.nullable(goString), null);
const seq = <T extends v.GenericSchema>(item: T) => v.optional(v.nullable(v.array(item)), null);

const inlineSchema = v.object({ encoding: v.optional(v.nullable(goString), ""), data: v.optional(v.nullable(goString), "") });
const fileSchema = v.object({
  path: optString,
  content: v.optional(
    v.nullable(
      v.object({
        inline: v.optional(v.nullable(inlineSchema), null),
        // Only presence matters; its fields are never read.
        imageref: v.optional(v.nullable(v.record(v.string(), v.unknown())), null),
      }),
    ),
    null,
  ),
});
const dropInSchema = v.object({ name: optString, content: optString });
const unitSchema = v.object({
  name: optString,
  enable: v.optional(v.nullable(v.boolean()), null),
  content: optString,
  dropins: seq(dropInSchema),
  filepaths: seq(goString),
});
const lastAppliedSchema = v.nullable(
  v.object({
    spec: v.optional(v.nullable(v.object({ files: seq(fileSchema), units: seq(unitSchema) })), null),
  }),
);

export interface CheckedInline {
  readonly encoding: string;
  readonly data: string;
}

export interface CheckedFile {
  readonly path: string;
  readonly inline: CheckedInline | undefined;
  readonly hasImageRef: boolean;
}

export interface CheckedDropIn {
  readonly name: string;
  readonly content: string;
}

export interface CheckedUnit {
  readonly name: string;
  readonly enable: boolean | undefined;
  /** undefined: no content in the OSC, only the file's presence is checked. */
  readonly content: string | undefined;
  readonly dropIns: readonly CheckedDropIn[];
  readonly filePaths: readonly string[];
}

export interface CheckedOsc {
  readonly files: readonly CheckedFile[];
  readonly units: readonly CheckedUnit[];
}

/** The last-applied file is not YAML, or its known keys have the wrong shape. */
export class LastAppliedParseError extends Error {
  override readonly name = "LastAppliedParseError";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

/** Reads `last-applied-osc.yaml` with upstream's key casing (see the comment at the top of this file). */
export function parseLastApplied(text: string | Uint8Array): CheckedOsc {
  let raw: unknown;
  try {
    raw = readYaml(text);
  } catch (err) {
    throw new LastAppliedParseError(`cannot parse OSC YAML: ${errorText(err)}`, { cause: err });
  }
  // An empty document decodes to the zero OSC, as in Go.
  const parsed = v.safeParse(lastAppliedSchema, raw === undefined ? null : raw);
  if (!parsed.success) throw new LastAppliedParseError(`cannot parse OSC YAML: ${issuesMessage(parsed.issues)}`);
  const spec = parsed.output?.spec;
  return {
    files: (spec?.files ?? []).map((f) => ({
      path: f.path ?? "",
      inline:
        f.content?.inline === null || f.content?.inline === undefined
          ? undefined
          : { encoding: f.content.inline.encoding ?? "", data: f.content.inline.data ?? "" },
      hasImageRef: f.content?.imageref !== null && f.content?.imageref !== undefined,
    })),
    units: (spec?.units ?? []).map((u) => ({
      name: u.name ?? "",
      enable: u.enable ?? undefined,
      content: u.content ?? undefined,
      dropIns: (u.dropins ?? []).map((d) => ({ name: d.name ?? "", content: d.content ?? "" })),
      filePaths: u.filepaths ?? [],
    })),
  };
}
