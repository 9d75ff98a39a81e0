import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  cosignSignatureAnnotation,
  cosignSignatureTag,
  signPayload,
  simpleSigningMediaType,
  simpleSigningPayload,
} from "../src/registry/cosign.ts";
import { sha256Digest } from "../src/registry/digest.ts";
import { MediaType } from "../src/registry/manifest.ts";
import { formatImageReference, parseImageReference } from "../src/registry/reference.ts";
import type { Transport } from "../src/registry/transport.ts";
import { pushOciLayout } from "./push-layout.ts";

export interface SignResult {
  /** `registry/repo:sha256-<hex>.sig` */
  readonly signatureTag: string;
  readonly payload: Uint8Array;
}

/**
 * Signs `pinned` (registry/repo@sha256:…) like `cosign sign --key`: a simple-signing payload for the
 * digest, its ECDSA P-256 signature in the layer annotation, pushed as an OCI manifest under the
 * `sha256-<hex>.sig` tag of the same repository. `cosign verify --key cosign.pub` accepts the result.
 */
export async function signImage(pinned: string, key: CryptoKey, transport: Transport, signal?: AbortSignal): Promise<SignResult> {
  const ref = parseImageReference(pinned);
  if (ref.digest === undefined) throw new Error(`sign target ${pinned} must name a digest`);
  const repository = `${ref.registry}/${ref.repository}`;
  const payload = simpleSigningPayload(repository, ref.digest);
  const signature = await signPayload(key, payload);
  const dir = await mkdtemp(join(tmpdir(), "gna-sign-"));
  try {
    const blobs = join(dir, "blobs/sha256");
    await mkdir(blobs, { recursive: true });
    const put = async (bytes: Uint8Array, mediaType: string, extra: object = {}) => {
      const digest = sha256Digest(bytes);
      await writeFile(join(blobs, digest.slice(7)), bytes);
      return { mediaType, digest, size: bytes.length, ...extra };
    };
    const layer = await put(payload, simpleSigningMediaType, { annotations: { [cosignSignatureAnnotation]: signature } });
    // cosign's config: no platform, the payload as the only diff_id.
    const configJson = {
      architecture: "",
      created: "0001-01-01T00:00:00Z",
      history: [{ created: "0001-01-01T00:00:00Z" }],
      os: "",
      rootfs: { type: "layers", diff_ids: [layer.digest] },
      config: {},
    };
    const config = await put(new TextEncoder().encode(JSON.stringify(configJson)), MediaType.ociConfig);
    const manifest = await put(
      new TextEncoder().encode(JSON.stringify({ schemaVersion: 2, mediaType: MediaType.ociManifest, config, layers: [layer] })),
      MediaType.ociManifest,
    );
    await writeFile(join(dir, "oci-layout"), JSON.stringify({ imageLayoutVersion: "1.0.0" }));
    await writeFile(join(dir, "index.json"), JSON.stringify({ schemaVersion: 2, manifests: [manifest] }));
    const signatureTag = formatImageReference({ registry: ref.registry, repository: ref.repository, tag: cosignSignatureTag(ref.digest) });
    await pushOciLayout(dir, signatureTag, transport, signal);
    return { signatureTag, payload };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
