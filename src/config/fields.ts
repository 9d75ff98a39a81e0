import * as v from "valibot";
import { DurationError, parseDuration } from "./duration.ts";
import { kindOf } from "../untrusted/index.ts";
import { canonicalSemVer, SemVerError } from "./semver.ts";

/**
 * Field schemas shared by the config sections. Go decodes `null` into a non-pointer field as its zero
 * value and its defaulting functions replace zero values, so most fields accept null/absent/zero alike.
 */

/** Optional field: absent and null both read as undefined. */
export const maybe = <const S extends v.GenericSchema>(schema: S) =>
  v.pipe(
    v.nullish(schema),
    v.transform((x) => x ?? undefined),
  );

/**
 * A Go string field. The Go agent's decoder (YAML → JSON → struct) rejects a number or boolean given
 * for it (`secretName: 12345`), and so does this one.
 */
const goString = v.string();

/** A string whose absent, null or empty value becomes `fallback`. */
export const stringOr = (fallback: string) =>
  v.pipe(
    v.nullish(goString, ""),
    v.transform((s) => (s === "" ? fallback : s)),
  );

/** A number whose absent, null or zero value becomes `fallback`. */
export const numberOr = (fallback: number) =>
  v.pipe(
    v.nullish(v.number(), 0),
    v.transform((n) => (n === 0 ? fallback : n)),
  );

/** Go int32. */
const int32 = v.pipe(v.number(), v.integer(), v.minValue(-(2 ** 31)), v.maxValue(2 ** 31 - 1));

/** Go int32 whose absent, null or zero value becomes `fallback`. */
export const int32Or = (fallback: number) =>
  v.pipe(
    v.nullish(int32, 0),
    v.transform((n) => (n === 0 ? fallback : n)),
  );

/** Go int64 (safe-integer range is all JS numbers hold exactly). */
export const int64 = v.pipe(v.number(), v.safeInteger());

/** A duration whose absent or null value becomes `fallbackMs` (Go defaults nil pointers only). */
export const durationOr = (fallbackMs: number) =>
  v.pipe(
    // The null default keeps the key required in the inferred output type.
    v.nullish(v.unknown(), null),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      const value = dataset.value;
      if (value === null || value === undefined) return fallbackMs;
      if (typeof value !== "string") {
        addIssue({ message: `invalid type: expected a duration string, got ${kindOf(value)}` });
        return NEVER;
      }
      try {
        return parseDuration(value);
      } catch (err) {
        if (!(err instanceof DurationError)) throw err;
        addIssue({ message: err.reason });
        return NEVER;
      }
    }),
  );

/** A lenient semver (`v1.33` accepted), carried in canonical form (`1.33.0`); null stays undefined. */
export const semver = v.pipe(
  v.string(),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    try {
      return canonicalSemVer(dataset.value);
    } catch (err) {
      if (!(err instanceof SemVerError)) throw err;
      addIssue({ message: "invalid semantic version" });
      return NEVER;
    }
  }),
);

/** valibot's `object` and `record` accept arrays; Go's decoder does not decode a list into a struct or map. */
export const notArray = v.check((x: unknown) => !Array.isArray(x), "invalid type: expected mapping, got array");

/** A struct field that is a mapping (not a list); absent and null read as undefined. */
export const maybeMapping = <const S extends v.GenericSchema>(schema: S) => maybe(v.pipe(v.unknown(), notArray, schema));

/** A struct field: absent or null reads as `{}`, so every default inside it applies. A list is refused. */
export const section = <const S extends v.GenericSchema>(schema: S) => v.pipe(v.nullish(v.unknown(), {}), notArray, schema);
