import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeTar } from "../../../oci/tar.ts";
import type { TarFile } from "../../../oci/tar.ts";
import { sha256Digest } from "../../../src/registry/digest.ts";

export interface TestLayer {
  readonly files: readonly TarFile[];
  readonly compression: "gzip" | "zstd" | "none";
  /** Raw layer bytes instead of a tar built from `files` (already "compressed" as declared). */
  readonly raw?: Uint8Array;
}

export interface TestPlatformImage {
  readonly architecture: string;
  readonly layers: readonly TestLayer[];
}

const layerType = {
  gzip: "application/vnd.oci.image.layer.v1.tar+gzip",
  zstd: "application/vnd.oci.image.layer.v1.tar+zstd",
  none: "application/vnd.oci.image.layer.v1.tar",
};

/**
 * Writes an OCI layout with an index over arbitrary per-platform layers, for pushing with
 * oci/push-layout.ts. With `single`, index.json points at the first platform's manifest directly.
 */
export function writeTestLayout(dir: string, images: readonly TestPlatformImage[], single = false): string {
  const blobs = join(dir, "blobs/sha256");
  mkdirSync(blobs, { recursive: true });
  const put = (data: Uint8Array | string, mediaType: string, extra: object = {}) => {
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    const digest = sha256Digest(bytes);
    writeFileSync(join(blobs, digest.slice(7)), bytes);
    return { mediaType, digest, size: bytes.length, ...extra };
  };
  const manifests = images.map((img) => {
    const layers = img.layers.map((l) => {
      const tar = (l.raw ?? writeTar(l.files)) as Uint8Array<ArrayBuffer>;
      const blob =
        l.raw !== undefined
          ? l.raw
          : l.compression === "gzip"
            ? Bun.gzipSync(tar)
            : l.compression === "zstd"
              ? Bun.zstdCompressSync(tar)
              : tar;
      return put(blob, layerType[l.compression]);
    });
    const config = put(
      JSON.stringify({ architecture: img.architecture, os: "linux", rootfs: { type: "layers", diff_ids: [] } }),
      "application/vnd.oci.image.config.v1+json",
    );
    const manifest = { schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json", config, layers };
    return put(JSON.stringify(manifest), manifest.mediaType, { platform: { architecture: img.architecture, os: "linux" } });
  });
  const top = single
    ? manifests[0]
    : put(
        JSON.stringify({ schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json", manifests }),
        "application/vnd.oci.image.index.v1+json",
      );
  writeFileSync(join(dir, "oci-layout"), JSON.stringify({ imageLayoutVersion: "1.0.0" }));
  writeFileSync(join(dir, "index.json"), JSON.stringify({ schemaVersion: 2, manifests: [top] }));
  return dir;
}
