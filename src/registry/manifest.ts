import * as v from "valibot";
import { issuesMessage } from "../untrusted/index.ts";
import { RegistryError } from "./errors.ts";

export const MediaType = {
  ociIndex: "application/vnd.oci.image.index.v1+json",
  ociManifest: "application/vnd.oci.image.manifest.v1+json",
  ociConfig: "application/vnd.oci.image.config.v1+json",
  ociLayerGzip: "application/vnd.oci.image.layer.v1.tar+gzip",
  ociLayerZstd: "application/vnd.oci.image.layer.v1.tar+zstd",
  ociLayerTar: "application/vnd.oci.image.layer.v1.tar",
  dockerList: "application/vnd.docker.distribution.manifest.list.v2+json",
  dockerManifest: "application/vnd.docker.distribution.manifest.v2+json",
  dockerLayerGzip: "application/vnd.docker.image.rootfs.diff.tar.gzip",
} as const;

/** Accept header for manifest requests: every kind we can read. */
export const MANIFEST_ACCEPT = [MediaType.ociIndex, MediaType.ociManifest, MediaType.dockerList, MediaType.dockerManifest].join(", ");

const PlatformSchema = v.object({
  os: v.string(),
  architecture: v.string(),
  variant: v.optional(v.string()),
});

const DescriptorSchema = v.object({
  mediaType: v.string(),
  digest: v.pipe(v.string(), v.regex(/^sha256:[a-f0-9]{64}$/)),
  size: v.pipe(v.number(), v.integer(), v.minValue(0)),
  annotations: v.optional(v.record(v.string(), v.string())),
  platform: v.optional(PlatformSchema),
});

const IndexSchema = v.object({
  schemaVersion: v.literal(2),
  mediaType: v.optional(v.picklist([MediaType.ociIndex, MediaType.dockerList])),
  manifests: v.array(DescriptorSchema),
});

const ManifestSchema = v.object({
  schemaVersion: v.literal(2),
  mediaType: v.optional(v.picklist([MediaType.ociManifest, MediaType.dockerManifest])),
  config: DescriptorSchema,
  layers: v.array(DescriptorSchema),
});

export type DescriptorDoc = v.InferOutput<typeof DescriptorSchema>;
export type IndexDoc = v.InferOutput<typeof IndexSchema>;
export type ManifestDoc = v.InferOutput<typeof ManifestSchema>;
export type ParsedManifest = { readonly kind: "index"; readonly doc: IndexDoc } | { readonly kind: "manifest"; readonly doc: ManifestDoc };

/**
 * Decodes a manifest body. The Content-Type header decides when it names a known kind; otherwise
 * the body's own mediaType, and finally its shape ("manifests" → index, "layers" → manifest).
 */
export function parseManifest(body: Uint8Array, contentType: string | null): ParsedManifest {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(body));
  } catch {
    // Not kept as cause: the parser's message quotes the token it stumbled on.
    throw new RegistryError("manifest is not valid JSON");
  }
  const type = contentType?.split(";")[0]?.trim();
  const bodyType =
    typeof json === "object" && json !== null && "mediaType" in json ? (json as { mediaType: unknown }).mediaType : undefined;
  const isIndex =
    type === MediaType.ociIndex ||
    type === MediaType.dockerList ||
    bodyType === MediaType.ociIndex ||
    bodyType === MediaType.dockerList ||
    (bodyType === undefined && typeof json === "object" && json !== null && "manifests" in json);
  if (isIndex) {
    const r = v.safeParse(IndexSchema, json);
    if (!r.success) throw new RegistryError(`invalid image index: ${issuesMessage(r.issues)}`);
    return { kind: "index", doc: r.output };
  }
  const r = v.safeParse(ManifestSchema, json);
  if (!r.success) throw new RegistryError(`invalid image manifest: ${issuesMessage(r.issues)}`);
  return { kind: "manifest", doc: r.output };
}

/** Token endpoint answer (Docker token spec: `token`, OAuth2 spelling `access_token`). */
export const TokenResponseSchema = v.object({
  token: v.optional(v.string()),
  access_token: v.optional(v.string()),
  expires_in: v.optional(v.number()),
});
