import * as v from "valibot";
import { TerminalError } from "../../../kube/index.ts";
import { issuesMessage, type Osc } from "../../../osc/index.ts";

/**
 * The typed view of `spec.inPlaceUpdates` and `status.inPlaceUpdates` (§1.2). Every key must be known: an
 * unimplemented field changes what must happen on the node, so it stops the apply instead of being ignored.
 */

const timestamp = v.optional(v.nullable(v.string()));
const rotation = v.optional(v.nullable(v.strictObject({ lastInitiationTime: timestamp })));

/** `kubelet` is the kubelet version; newer gardenlets send an object whose `version` is that string. */
const kubeletField = v.union([
  v.string(),
  v.strictObject({
    version: v.string(),
    cpuManagerPolicy: v.optional(v.nullable(v.string())),
    evictionHard: v.optional(v.nullable(v.record(v.string(), v.unknown()))),
    kubeReserved: v.optional(v.nullable(v.record(v.string(), v.unknown()))),
    systemReserved: v.optional(v.nullable(v.record(v.string(), v.unknown()))),
  }),
]);

const inPlaceSpecSchema = v.strictObject({
  operatingSystemVersion: v.optional(v.string(), ""),
  kubelet: v.optional(kubeletField, ""),
  credentialsRotation: v.optional(v.nullable(v.strictObject({ certificateAuthorities: rotation, serviceAccountKey: rotation }))),
});

const inPlaceStatusSchema = v.strictObject({
  osUpdate: v.optional(
    v.nullable(v.strictObject({ command: v.optional(v.string(), ""), args: v.optional(v.nullable(v.array(v.string()))) })),
  ),
});

export interface RotationTimes {
  /** undefined = the sub-section is absent; null = present without lastInitiationTime. */
  readonly certificateAuthorities: string | null | undefined;
  readonly serviceAccountKey: string | null | undefined;
}

export interface InPlaceSpec {
  readonly operatingSystemVersion: string;
  readonly kubeletVersion: string;
  readonly credentialsRotation: RotationTimes | undefined;
}

export interface OsUpdateCommand {
  readonly command: string;
  readonly args: readonly string[];
}

/** An OSC field that changes what happens on the node and that this agent does not implement. */
export class UnsupportedOscFieldError extends Error {
  override readonly name = "UnsupportedOscFieldError";
  constructor(
    readonly field: string,
    detail: string,
  ) {
    super(`operating system config field ${field} is not supported by this agent (${detail}); nothing was applied`);
  }
}

const sub = (x: { lastInitiationTime?: string | null | undefined } | null | undefined): string | null | undefined =>
  x === undefined || x === null ? undefined : (x.lastInitiationTime ?? null);

function parseSection<S extends v.GenericSchema>(schema: S, raw: unknown, path: string): v.InferOutput<S> {
  const res = v.safeParse(schema, raw);
  if (res.success) return res.output;
  const first = res.issues[0];
  const dot = first === undefined ? null : v.getDotPath(first);
  const field = dot === null ? path : `${path}.${dot}`;
  if (first?.type === "strict_object") throw new UnsupportedOscFieldError(field, "unknown field");
  throw new UnsupportedOscFieldError(field, issuesMessage(res.issues));
}

/** `spec.inPlaceUpdates`, or undefined for a rolling-update pool. Throws UnsupportedOscFieldError on unknown keys. */
export function inPlaceSpecOf(osc: Osc): InPlaceSpec | undefined {
  const raw = osc.spec.inPlaceUpdates;
  if (raw === undefined) return undefined;
  const s = parseSection(inPlaceSpecSchema, raw, "spec.inPlaceUpdates");
  const cr = s.credentialsRotation;
  return {
    operatingSystemVersion: s.operatingSystemVersion,
    kubeletVersion: typeof s.kubelet === "string" ? s.kubelet : s.kubelet.version,
    credentialsRotation:
      cr === undefined || cr === null
        ? undefined
        : { certificateAuthorities: sub(cr.certificateAuthorities), serviceAccountKey: sub(cr.serviceAccountKey) },
  };
}

/** `status.inPlaceUpdates.osUpdate`, or undefined. Throws UnsupportedOscFieldError on unknown keys. */
export function osUpdateOf(osc: Osc): OsUpdateCommand | undefined {
  const raw = osc.status.inPlaceUpdates;
  if (raw === undefined) return undefined;
  const s = parseSection(inPlaceStatusSchema, raw, "status.inPlaceUpdates");
  if (s.osUpdate === undefined || s.osUpdate === null) return undefined;
  return { command: s.osUpdate.command, args: s.osUpdate.args ?? [] };
}

/**
 * "Never silently ignore": both in-place sections must be fully understood before anything is applied.
 * Terminal: retrying cannot help, a new OSC (which the Secret watch delivers) can.
 */
export function checkInPlaceFields(osc: Osc): void {
  try {
    inPlaceSpecOf(osc);
    osUpdateOf(osc);
  } catch (err) {
    if (err instanceof UnsupportedOscFieldError) throw new TerminalError(err.message, { cause: err });
    throw err;
  }
}
