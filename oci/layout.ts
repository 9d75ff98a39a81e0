import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { sha256Digest } from "../src/registry/digest.ts";
import { MediaType } from "../src/registry/manifest.ts";
import { writeTar } from "./tar.ts";

export type Compression = "gzip" | "zstd";

export interface BuildInput {
  /** Binary bytes per OCI architecture ("amd64", "arm64"). */
  readonly binaries: Readonly<Record<string, Uint8Array>>;
  readonly outDir: string;
  readonly version: string;
  readonly revision: string;
  /** RFC 3339 timestamp for the `created` annotations. */
  readonly created: string;
  readonly source: string;
  readonly compression?: Compression;
  /** Also compress with the other algorithm, only to report its size. */
  readonly measureOther?: boolean;
}

export interface BuiltLayer {
  readonly architecture: string;
  readonly tarSize: number;
  readonly size: number;
  readonly compression: Compression;
  readonly otherSize?: number;
}

export interface BuildResult {
  readonly indexDigest: string;
  readonly indexSize: number;
  readonly layers: readonly BuiltLayer[];
}

/** Layer file times are fixed so equal binaries give equal layer digests. */
const LAYER_MTIME = 0;
const BINARY_NAME = "gardener-node-agent";

function compress(tar: Uint8Array<ArrayBuffer>, c: Compression): Uint8Array {
  return c === "gzip" ? Bun.gzipSync(tar, { level: 9 }) : Bun.zstdCompressSync(tar, { level: 19 });
}

/**
 * Writes an OCI image layout: `oci-layout`, `blobs/sha256/*`, and `index.json` pointing at one
 * image index (tagged with the version) that holds one manifest per architecture. Each manifest has
 * a config and a single layer with the executable at `/gardener-node-agent`, mode 0755, root-owned.
 */
export async function buildOciLayout(input: BuildInput): Promise<BuildResult> {
  const compression = input.compression ?? "gzip";
  const blobsDir = join(input.outDir, "blobs", "sha256");
  await rm(input.outDir, { recursive: true, force: true });
  await mkdir(blobsDir, { recursive: true });
  const putBlob = async (bytes: Uint8Array | string, mediaType: string, extra: object = {}) => {
    const data = typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes;
    const digest = sha256Digest(data);
    await writeFile(join(blobsDir, digest.slice(7)), data);
    return { mediaType, digest, size: data.length, ...extra };
  };
  const annotations = {
    "org.opencontainers.image.created": input.created,
    "org.opencontainers.image.revision": input.revision,
    "org.opencontainers.image.source": input.source,
    "org.opencontainers.image.version": input.version,
  };

  const manifests: object[] = [];
  const layers: BuiltLayer[] = [];
  for (const architecture of Object.keys(input.binaries).sort()) {
    const binary = input.binaries[architecture] as Uint8Array;
    const tar = writeTar([{ path: BINARY_NAME, data: binary, mode: 0o755, mtime: LAYER_MTIME }]) as Uint8Array<ArrayBuffer>;
    const compressed = compress(tar, compression);
    const layerType = compression === "gzip" ? MediaType.ociLayerGzip : MediaType.ociLayerZstd;
    const layer = await putBlob(compressed, layerType);
    const config = {
      architecture,
      os: "linux",
      config: { Entrypoint: [`/${BINARY_NAME}`] },
      rootfs: { type: "layers", diff_ids: [sha256Digest(tar)] },
    };
    const configDesc = await putBlob(JSON.stringify(config), MediaType.ociConfig);
    const manifest = { schemaVersion: 2, mediaType: MediaType.ociManifest, config: configDesc, layers: [layer], annotations };
    manifests.push(await putBlob(JSON.stringify(manifest), MediaType.ociManifest, { platform: { architecture, os: "linux" } }));
    const other: Compression = compression === "gzip" ? "zstd" : "gzip";
    layers.push({
      architecture,
      tarSize: tar.length,
      size: compressed.length,
      compression,
      ...(input.measureOther ? { otherSize: compress(tar, other).length } : {}),
    });
  }
  const index = { schemaVersion: 2, mediaType: MediaType.ociIndex, manifests, annotations };
  const indexDesc = await putBlob(JSON.stringify(index), MediaType.ociIndex, {
    annotations: { "org.opencontainers.image.ref.name": input.version },
  });
  await writeFile(join(input.outDir, "oci-layout"), JSON.stringify({ imageLayoutVersion: "1.0.0" }));
  await writeFile(
    join(input.outDir, "index.json"),
    JSON.stringify({ schemaVersion: 2, mediaType: MediaType.ociIndex, manifests: [indexDesc] }),
  );
  return { indexDigest: indexDesc.digest, indexSize: indexDesc.size, layers };
}
