import * as v from "valibot";

const statusSchema = v.looseObject({
  status: v.optional(
    v.nullable(
      v.looseObject({
        conditions: v.optional(v.nullable(v.array(v.unknown()))),
        addresses: v.optional(v.nullable(v.array(v.unknown()))),
      }),
    ),
  ),
});
const typedEntry = v.looseObject({ type: v.string(), status: v.optional(v.string()), address: v.optional(v.string()) });

/** The entries of a status list that have the shape `{type, …}`; malformed entries are skipped. */
function entries(node: unknown, list: "conditions" | "addresses"): Array<v.InferOutput<typeof typedEntry>> {
  const parsed = v.safeParse(statusSchema, node);
  if (!parsed.success) return [];
  const out: Array<v.InferOutput<typeof typedEntry>> = [];
  for (const raw of parsed.output.status?.[list] ?? []) {
    const e = v.safeParse(typedEntry, raw);
    if (e.success) out.push(e.output);
  }
  return out;
}

/** Ready iff the first condition of type `Ready` has status `True` (missing → not ready). */
export function nodeReady(node: unknown): boolean {
  return entries(node, "conditions").find((c) => c.type === "Ready")?.status === "True";
}

/** The last non-empty InternalIP and ExternalIP of `status.addresses` (as upstream's scan keeps the last). */
export function nodeAddresses(node: unknown): { readonly internalIp: string | undefined; readonly externalIp: string | undefined } {
  let internalIp: string | undefined;
  let externalIp: string | undefined;
  for (const a of entries(node, "addresses")) {
    if (a.type === "InternalIP") internalIp = a.address;
    else if (a.type === "ExternalIP") externalIp = a.address;
  }
  return { internalIp: internalIp === "" ? undefined : internalIp, externalIp: externalIp === "" ? undefined : externalIp };
}
