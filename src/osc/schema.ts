import * as v from "valibot";
import { fileEntryFast, withFastPath } from "./file-fast.ts";

/** `null`/absent → undefined (Go pointer/omitempty semantics). */
const opt = <S extends v.GenericSchema>(schema: S) =>
  v.pipe(
    v.nullish(schema),
    v.transform((x): v.InferOutput<S> | undefined => x ?? undefined),
  );

/** A list where absent, null and empty are the same thing (k8s semantic equality). */
const optList = <S extends v.GenericSchema>(item: S) =>
  v.pipe(
    v.nullish(v.array(item)),
    v.transform((a): v.InferOutput<S>[] | undefined => (a === null || a === undefined || a.length === 0 ? undefined : a)),
  );

const str = v.string();

export const dropInSchema = v.object({ name: str, content: str });
export type DropIn = v.InferOutput<typeof dropInSchema>;

const unitEntries = {
  name: str,
  command: opt(str),
  enable: opt(v.boolean()),
  content: opt(str),
  dropIns: optList(dropInSchema),
  filePaths: optList(str),
};

export const unitSchema = v.object(unitEntries);
export type Unit = v.InferOutput<typeof unitSchema>;

const fileContentSchema = v.object({
  inline: opt(v.object({ encoding: v.optional(str, ""), data: v.optional(str, "") })),
  secretRef: opt(v.object({ name: str, dataKey: str })),
  imageRef: opt(v.object({ image: str, filePathInImage: str })),
  transmitUnencoded: opt(v.boolean()),
});

const fileEntrySchema = v.object({
  path: str,
  permissions: opt(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(0xffffffff))),
  content: v.optional(fileContentSchema, {}),
  hostName: opt(str),
});
export type OscFile = v.InferOutput<typeof fileEntrySchema>;

/**
 * The file entry's schema with a hand-built path for well-formed entries (file-fast.ts): the same output,
 * key for key and in the same order; anything else (every invalid entry) goes through valibot, so its
 * issues are valibot's. A 1000-file OSC is decoded once per apply and once more when last-applied is written.
 */
export const fileSchema = withFastPath(fileEntrySchema, fileEntryFast as (input: unknown) => OscFile | undefined);

const registryHostSchema = v.object({
  url: str,
  capabilities: optList(str),
  caCerts: optList(str),
  overridePath: opt(v.boolean()),
});

export const registryConfigSchema = v.object({
  upstream: str,
  server: opt(str),
  hosts: optList(registryHostSchema),
  readinessProbe: opt(v.boolean()),
});
export type RegistryConfig = v.InferOutput<typeof registryConfigSchema>;

export const pluginConfigSchema = v.object({
  op: opt(str),
  path: v.array(str),
  values: opt(v.record(str, v.unknown())),
});
export type PluginConfig = v.InferOutput<typeof pluginConfigSchema>;

const containerdConfigSchema = v.object({
  sandboxImage: v.optional(str, ""),
  registries: optList(registryConfigSchema),
  plugins: optList(pluginConfigSchema),
});

export const criConfigSchema = v.object({
  name: v.optional(str, ""),
  cgroupDriver: opt(str),
  containerd: opt(containerdConfigSchema),
});
export type CriConfig = v.InferOutput<typeof criConfigSchema>;

/** ADVANCED parts are carried through verbatim (only round-tripped into last-applied). */
const opaque = opt(v.record(str, v.unknown()));

const oscSpecSchema = v.object({
  type: v.optional(str, ""),
  purpose: v.optional(str, ""),
  units: optList(unitSchema),
  files: optList(fileSchema),
  criConfig: opt(criConfigSchema),
  inPlaceUpdates: opaque,
});

const oscStatusSchema = v.object({
  extensionUnits: optList(unitSchema),
  extensionFiles: optList(fileSchema),
  inPlaceUpdates: opaque,
});

export const oscSchema = v.object({
  apiVersion: opt(str),
  kind: opt(str),
  spec: v.optional(oscSpecSchema, {}),
  status: v.optional(oscStatusSchema, {}),
});
export type Osc = v.InferOutput<typeof oscSchema>;

export const oscApiVersion = "extensions.gardener.cloud/v1alpha1";
export const oscKind = "OperatingSystemConfig";
