import { keepOutOfTopTier } from "../jit/index.ts";
import type * as v from "valibot";
import { isMapping } from "./yaml-fast.ts";

/**
 * `schema` whose parse first asks `fast`: its value when it has one (a success, no issues), else
 * `schema`'s own parse. `fast` must answer exactly what `schema` outputs for that input, or undefined.
 */
export function withFastPath<S extends v.GenericSchema>(schema: S, fast: (input: unknown) => v.InferOutput<S> | undefined): S {
  return {
    ...schema,
    "~run"(dataset, config) {
      const value = fast(dataset.value);
      return value === undefined ? schema["~run"](dataset, config) : { typed: true, value };
    },
  };
}

type Fields = Record<string, unknown>;

/**
 * An `opt(...)` key (schema.ts: null and undefined become undefined, the key kept when it was there):
 * `set` when it is absent or fits, false when valibot must look at the entry.
 */
function optional(input: Fields, key: string, out: Fields, fits: (x: unknown) => unknown): boolean {
  if (!(key in input)) return true;
  const x = input[key];
  if (x === null || x === undefined) {
    out[key] = undefined;
    return true;
  }
  const value = fits(x);
  if (value === undefined) return false;
  out[key] = value;
  return true;
}

const asString = (x: unknown): string | undefined => (typeof x === "string" ? x : undefined);
const asBoolean = (x: unknown): boolean | undefined => (typeof x === "boolean" ? x : undefined);
const asPermissions = (x: unknown): number | undefined =>
  typeof x === "number" && Number.isInteger(x) && x >= 0 && x <= 0xffffffff ? x : undefined;
/** `v.optional(str, "")`: absent or undefined is "", null is an issue. */
const stringOrEmpty = (x: unknown): string | undefined => (x === undefined ? "" : asString(x));

/** An object of two required strings, `{a, b}` in that order. */
const twoStrings =
  (a: string, b: string) =>
  (x: unknown): Fields | undefined => {
    if (!isMapping(x)) return undefined;
    const first = x[a];
    const second = x[b];
    return typeof first === "string" && typeof second === "string" ? { [a]: first, [b]: second } : undefined;
  };
const secretRef = twoStrings("name", "dataKey");
const imageRef = twoStrings("image", "filePathInImage");

function inline(x: unknown): Fields | undefined {
  if (!isMapping(x)) return undefined;
  const encoding = stringOrEmpty(x["encoding"]);
  const data = stringOrEmpty(x["data"]);
  return encoding === undefined || data === undefined ? undefined : { encoding, data };
}

function content(x: unknown): Fields | undefined {
  if (!isMapping(x)) return undefined;
  const out: Fields = {};
  const fits =
    optional(x, "inline", out, inline) &&
    optional(x, "secretRef", out, secretRef) &&
    optional(x, "imageRef", out, imageRef) &&
    optional(x, "transmitUnencoded", out, asBoolean);
  return fits ? out : undefined;
}

/**
 * schema.ts `fileSchema`'s output for a well-formed file entry, built without valibot's per-key datasets
 * (a 1000-file OSC: ~20 schema runs and their objects per file): keys in the schema's order, unknown keys
 * dropped, `content` defaulted to `{}`; undefined for anything it does not certainly reproduce.
 */
export function fileEntryFast(input: unknown): Fields | undefined {
  if (!isMapping(input)) return undefined;
  const path = input["path"];
  if (typeof path !== "string") return undefined;
  const out: Fields = { path };
  if (!optional(input, "permissions", out, asPermissions)) return undefined;
  const given = input["content"];
  const parsed = given === undefined ? {} : content(given);
  if (parsed === undefined) return undefined;
  out["content"] = parsed;
  if (!optional(input, "hostName", out, asString)) return undefined;
  return out;
}
// Issue 25: per file or line of a 1000-file apply (jit/top-tier.ts).
keepOutOfTopTier(optional, stringOrEmpty);
