/** ObjectMeta details the store applies on write: field order and generateName suffixes. */
type Obj = Record<string, unknown>;

const GEN_ALPHABET = "bcdfghjklmnpqrstvwxz2456789";
/** The 5 characters generateName gets (apimachinery's alphabet without vowels and look-alikes). */
export const randomSuffix = (): string =>
  Array.from(crypto.getRandomValues(new Uint8Array(5)), (b) => GEN_ALPHABET[b % GEN_ALPHABET.length]).join("");

/** ObjectMeta fields in the order the Go structs serialise them (schema.ts prunes by the same list). */
export const META_ORDER: readonly string[] = [
  "name",
  "generateName",
  "namespace",
  "selfLink",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "labels",
  "annotations",
  "ownerReferences",
  "finalizers",
  "managedFields",
];
export function orderMeta(m: Obj): Obj {
  const out: Obj = {};
  for (const k of META_ORDER) if (m[k] !== undefined) out[k] = m[k];
  for (const [k, v] of Object.entries(m)) if (!(k in out) && v !== undefined) out[k] = v;
  return out;
}
