import * as v from "valibot";
import { issueText } from "../untrusted/index.ts";
import { SystemdCallError, type UnitProperties, type UnitStatus } from "./types.ts";

/** A reply body did not have the shape systemd documents. Names where and what was expected, never the value. */
class ReplyShapeError extends SystemdCallError {
  constructor(what: string, issues: readonly v.BaseIssue<unknown>[]) {
    const first = issues[0];
    const where = first ? v.getDotPath(first) : null;
    super(`unexpected ${what} from systemd${where ? ` at ${where}` : ""}: ${first === undefined ? "invalid" : issueText(first)}`);
  }
}

function parse<S extends v.GenericSchema>(schema: S, input: unknown, what: string): v.InferOutput<S> {
  const res = v.safeParse(schema, input);
  if (!res.success) throw new ReplyShapeError(what, res.issues);
  return res.output;
}

/** dbus-next hands variants over as `{signature, value}` objects. */
const VariantSchema = v.object({ signature: v.string(), value: v.unknown() });

const ObjectPathReply = v.tuple([v.string()]);

export function decodeObjectPath(body: unknown, what: string): string {
  return parse(ObjectPathReply, body, what)[0];
}

/** ListUnits / ListUnitsByNames: a(ssssssouso) — name, description, load, active, sub, following, path, … */
const UnitListReply = v.tuple([
  // v.tuple drops the trailing fields (following, unit path, job id/type/path) nobody reads.
  v.array(v.tuple([v.string(), v.string(), v.string(), v.string(), v.string()])),
]);

export function decodeUnitList(body: unknown): UnitStatus[] {
  return parse(UnitListReply, body, "unit list")[0].map(([name, description, loadState, activeState, subState]) => ({
    name,
    description,
    loadState,
    activeState,
    subState,
  }));
}

const UsecSchema = v.union([v.bigint(), v.pipe(v.number(), v.integer())]);
const BytesSchema = v.union([v.instance(Uint8Array), v.array(v.pipe(v.number(), v.integer()))]);

const variantOf = <S extends v.GenericSchema>(schema: S) =>
  v.pipe(
    VariantSchema,
    v.transform((variant) => variant.value),
    schema,
  );

const UnitPropertiesReply = v.tuple([
  v.object({
    ActiveState: variantOf(v.string()),
    SubState: variantOf(v.string()),
    LoadState: variantOf(v.string()),
    UnitFileState: v.optional(variantOf(v.string()), { signature: "s", value: "" }),
    StateChangeTimestamp: variantOf(UsecSchema),
    InvocationID: v.optional(variantOf(BytesSchema), { signature: "ay", value: [] }),
  }),
]);

/** Properties.GetAll("org.freedesktop.systemd1.Unit") → the fields the controllers look at. */
export function decodeUnitProperties(body: unknown): UnitProperties {
  const [p] = parse(UnitPropertiesReply, body, "unit properties");
  const us = BigInt(p.StateChangeTimestamp);
  return {
    activeState: p.ActiveState,
    subState: p.SubState,
    loadState: p.LoadState,
    unitFileState: p.UnitFileState,
    stateChangeTimestampMs: Number(us / 1000n),
    invocationId: Buffer.from(p.InvocationID).toString("hex"),
  };
}

const StringVariantReply = v.tuple([variantOf(v.string())]);
const StringArrayVariantReply = v.tuple([variantOf(v.array(v.string()))]);

export function decodeStringProperty(body: unknown, what: string): string {
  return parse(StringVariantReply, body, what)[0];
}

export function decodeStringArrayProperty(body: unknown, what: string): string[] {
  return parse(StringArrayVariantReply, body, what)[0];
}

/** JobRemoved(u id, o job, s unit, s result) */
const JobRemovedBody = v.tuple([v.number(), v.string(), v.string(), v.string()]);

export function decodeJobRemoved(body: unknown): { jobPath: string; unit: string; result: string } | undefined {
  const res = v.safeParse(JobRemovedBody, body);
  if (!res.success) return undefined;
  const [, jobPath, unit, result] = res.output;
  return { jobPath, unit, result };
}
