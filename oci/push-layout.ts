import { readFile } from "node:fs/promises";
import { join } from "node:path";
import * as v from "valibot";
import { sha256Digest } from "../src/registry/digest.ts";
import { parseManifest } from "../src/registry/manifest.ts";
import { formatImageReference, parseImageReference } from "../src/registry/reference.ts";
import { RegistryHttpError } from "../src/registry/transport.ts";
import type { Transport } from "../src/registry/transport.ts";
import { RegistryError } from "../src/registry/errors.ts";
import type { ImageReference } from "../src/registry/types.ts";

export interface PushResult {
  /** `registry/repo@sha256:…` of the pushed image index. */
  readonly reference: string;
  readonly indexDigest: string;
  readonly uploadedBlobs: number;
  readonly uploadedManifests: number;
  readonly uploadedBytes: number;
}

const LayoutIndexSchema = v.object({
  manifests: v.pipe(
    v.array(v.object({ mediaType: v.string(), digest: v.pipe(v.string(), v.regex(/^sha256:[a-f0-9]{64}$/)) })),
    v.minLength(1),
  ),
});

/**
 * Pushes the image index found in an OCI layout's index.json to `target` (host/repo:tag):
 * blobs (HEAD → skip, else POST + monolithic PUT), then each platform manifest by digest, then the
 * index by tag. Everything already present is skipped, so a second push uploads nothing.
 */
export async function pushOciLayout(layoutDir: string, target: string, transport: Transport, signal?: AbortSignal): Promise<PushResult> {
  const ref = parseImageReference(target);
  if (ref.digest !== undefined) throw new RegistryError(`push target ${target} must be a tag, not a digest`);
  const tag = ref.tag ?? "latest";
  const readBlob = async (digest: string): Promise<Uint8Array> => {
    const data = new Uint8Array(await readFile(join(layoutDir, "blobs", "sha256", digest.slice("sha256:".length))));
    if (sha256Digest(data) !== digest) throw new RegistryError(`layout blob ${digest} is corrupt`);
    return data;
  };
  const layoutIndex = v.parse(LayoutIndexSchema, JSON.parse(await readFile(join(layoutDir, "index.json"), "utf8")));
  const top = layoutIndex.manifests[0] as { mediaType: string; digest: string };
  const topBytes = await readBlob(top.digest);
  const parsedTop = parseManifest(topBytes, top.mediaType);
  const children = parsedTop.kind === "index" ? parsedTop.doc.manifests : [];
  const stats = { uploadedBlobs: 0, uploadedManifests: 0, uploadedBytes: 0 };

  const send = (path: string, method: string, headers: Record<string, string> = {}, body?: Uint8Array) =>
    transport.send({
      registry: ref.registry,
      repository: ref.repository,
      path,
      method,
      headers,
      actions: "pull,push",
      ...(body !== undefined ? { body } : {}),
      ...(signal ? { signal } : {}),
    });
  const expect = async (res: Response, ok: number[], what: string) => {
    if (!ok.includes(res.status))
      throw new RegistryHttpError(res.status, `${formatImageReference(ref)} ${what}`, (await res.text()).slice(0, 300));
    await res.body?.cancel();
  };

  const pushBlob = async (digest: string) => {
    const head = await send(`/v2/${ref.repository}/blobs/${digest}`, "HEAD");
    if (head.status === 200) return;
    await expect(head, [404], `HEAD blob ${digest}`);
    const data = await readBlob(digest);
    const start = await send(`/v2/${ref.repository}/blobs/uploads/`, "POST", { "content-length": "0" });
    const location = start.headers.get("location");
    await expect(start, [202], "start upload");
    if (location === null) throw new RegistryError("registry did not return an upload location");
    const url = new URL(location, transport.baseUrl(ref.registry));
    url.searchParams.set("digest", digest);
    const put = await send(url.toString(), "PUT", { "content-type": "application/octet-stream" }, data);
    await expect(put, [201], `upload blob ${digest}`);
    stats.uploadedBlobs++;
    stats.uploadedBytes += data.length;
  };

  const pushManifest = async (reference: string, mediaType: string, bytes: Uint8Array) => {
    const digest = sha256Digest(bytes);
    const head = await send(`/v2/${ref.repository}/manifests/${reference}`, "HEAD", { accept: mediaType });
    if (head.status === 200 && head.headers.get("docker-content-digest") === digest) return;
    await head.body?.cancel();
    const put = await send(`/v2/${ref.repository}/manifests/${reference}`, "PUT", { "content-type": mediaType }, bytes);
    await expect(put, [201], `PUT manifest ${reference}`);
    stats.uploadedManifests++;
  };

  for (const child of children) {
    const bytes = await readBlob(child.digest);
    const manifest = parseManifest(bytes, child.mediaType);
    if (manifest.kind !== "manifest") throw new RegistryError(`nested index ${child.digest} is not supported`);
    for (const blob of [manifest.doc.config, ...manifest.doc.layers]) await pushBlob(blob.digest);
    await pushManifest(child.digest, child.mediaType, bytes);
  }
  if (parsedTop.kind === "manifest") {
    for (const blob of [parsedTop.doc.config, ...parsedTop.doc.layers]) await pushBlob(blob.digest);
  }
  await pushManifest(tag, top.mediaType, topBytes);
  const pinned: ImageReference = { registry: ref.registry, repository: ref.repository, digest: top.digest };
  return { reference: formatImageReference(pinned), indexDigest: top.digest, ...stats };
}
