import { describe, expect, test } from "bun:test";
import * as v from "valibot";
import { decodeOsc } from "./decode.ts";
import { fileEntryFast } from "./file-fast.ts";
import { fileSchema } from "./schema.ts";

/** The same entries parsed by valibot alone (fileSchema without its fast path). */
const valibotOnly = v.object(fileSchema.entries);

/** A value with every key, its order, undefined values and -0 visible (toStrictEqual ignores key order). */
function shape(x: unknown): unknown {
  if (x === undefined) return "<undefined>";
  if (Object.is(x, -0)) return "<-0>";
  if (Number.isNaN(x)) return "<NaN>";
  if (Array.isArray(x)) return x.map(shape);
  if (typeof x === "object" && x !== null) return Object.keys(x).map((k) => [k, shape((x as Record<string, unknown>)[k])]);
  return x;
}

const issues = (r: v.SafeParseResult<typeof valibotOnly>) =>
  r.success ? undefined : r.issues.map((i) => [i.message, i.path?.map((p) => p.key)]);

const absent = Symbol("absent");
type Variant = unknown;
const withKey = (base: Record<string, unknown>, key: string, value: Variant): Record<string, unknown> =>
  value === absent ? base : { ...base, [key]: value };

const strings2 = (a: string, b: string): Variant[] => [
  null,
  undefined,
  { [a]: "x", [b]: "y" },
  { [b]: "y", [a]: "x" },
  { [a]: "x" },
  { [a]: 1, [b]: "y" },
  {},
  "x",
  [],
];
const contents: Variant[] = [
  absent,
  undefined,
  null,
  [],
  {},
  "x",
  { other: 1 },
  ...[
    null,
    undefined,
    {},
    { data: "x" },
    { encoding: "b64", data: "eA==" },
    { data: "x", encoding: "" },
    { encoding: null },
    { data: 5 },
    { encoding: undefined, data: undefined },
    [],
    "s",
  ].map((inline) => ({ inline })),
  ...strings2("name", "dataKey").map((secretRef) => ({ secretRef })),
  ...strings2("image", "filePathInImage").map((imageRef) => ({ imageRef })),
  ...[null, undefined, true, false, "true", 0].map((transmitUnencoded) => ({ transmitUnencoded })),
  {
    transmitUnencoded: true,
    imageRef: { image: "i", filePathInImage: "/f" },
    secretRef: { dataKey: "k", name: "s" },
    inline: { data: "x" },
    other: 1,
  },
];
const paths: Variant[] = [absent, "/etc/a", "", 5, null, undefined];
const permissions: Variant[] = [
  absent,
  null,
  undefined,
  420,
  0,
  -0,
  0o7777,
  0xffffffff,
  0x100000000,
  -1,
  1.5,
  Number.NaN,
  Infinity,
  "420",
  true,
];
const hostNames: Variant[] = [absent, null, undefined, "node-a", 7];
const extras: Variant[] = [absent, { x: 1 }];

function* entries(): Generator<unknown> {
  for (const path of paths)
    for (const perm of permissions)
      for (const content of contents)
        for (const hostName of hostNames)
          for (const extra of extras) {
            let e: Record<string, unknown> = withKey({}, "extra", extra);
            e = withKey(e, "hostName", hostName);
            e = withKey(e, "content", content);
            e = withKey(e, "permissions", perm);
            yield withKey(e, "path", path);
          }
  yield* [null, undefined, "x", 5, [], [{ path: "/a" }]];
}

describe("fileEntryFast", () => {
  test("should answer exactly what valibot outputs, key order and undefined keys included, or leave the entry to valibot", () => {
    let fast = 0;
    let total = 0;
    for (const entry of entries()) {
      total++;
      const want = v.safeParse(valibotOnly, entry);
      const got = v.safeParse(fileSchema, entry);
      expect(issues(got)).toEqual(issues(want));
      if (want.success && got.success) expect(shape(got.output)).toEqual(shape(want.output));
      const direct = fileEntryFast(entry);
      if (direct === undefined) continue;
      fast++;
      expect(want.success).toBe(true);
      if (want.success) expect(shape(direct)).toEqual(shape(want.output));
    }
    // The generator covers both ways: many entries go the fast way, and every invalid one goes to valibot.
    expect(total).toBeGreaterThan(10_000);
    expect(fast).toBeGreaterThan(1_000);
  });

  test("should take the entries an OSC usually has (inline data, permissions, secretRef, imageRef)", () => {
    for (const entry of [
      { path: "/etc/a", permissions: 420, content: { inline: { data: "x\n" } } },
      { path: "/etc/b", permissions: 384, content: { inline: { encoding: "b64", data: "eA==" } } },
      { path: "/etc/c", content: { secretRef: { name: "s", dataKey: "k" }, transmitUnencoded: true } },
      { path: "/opt/bin/x", permissions: 493, content: { imageRef: { image: "r/i:v", filePathInImage: "/x" } } },
    ])
      expect(fileEntryFast(entry)).toBeDefined();
  });

  test("should decode an OSC's files as before: defaults filled in, an invalid entry named by its path in the issue", () => {
    const osc = decodeOsc("spec:\n  files:\n  - path: /a\n    content: {inline: {data: x}}\n  - path: /b\n    hostName: null\n");
    expect(shape(osc.spec.files)).toEqual(
      shape([
        { path: "/a", content: { inline: { encoding: "", data: "x" } } },
        { path: "/b", content: {}, hostName: undefined },
      ]),
    );
    expect(() => decodeOsc("spec:\n  files:\n  - path: /a\n  - path: /b\n    permissions: -1\n")).toThrow(
      "invalid OperatingSystemConfig: spec.files.1.permissions: invalid value: must be >=0",
    );
  });
});
