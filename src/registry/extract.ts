import { quoteName } from "../untrusted/index.ts";
import type { HostFs } from "../host/index.ts";
import { sha256Digest } from "./digest.ts";
import { decompressLayer } from "./layer.ts";
import { parseImageReference } from "./reference.ts";
import { findInTar, normalizeTarPath } from "./tar.ts";
import type { TarLookup } from "./tar.ts";
import { RegistryError } from "./errors.ts";
import type { Platform, Registry } from "./types.ts";

/** Upstream images built with ko keep the binary here (spec osc-controller §6.2 fallback). */
const AGENT_PATH = "/gardener-node-agent";
const KO_AGENT_PATH = "/ko-app/gardener-node-agent";

export interface ExtractFileOptions {
  readonly registry: Registry;
  /** Where the cache lives; without it nothing is cached. */
  readonly hostFs?: HostFs;
  /** Host path of the cache directory, e.g. "/var/lib/gardener-node-agent/tmp/image-cache". */
  readonly cacheDir: string;
  readonly image: string;
  readonly filePathInImage: string;
  readonly platform: Platform;
  readonly signal?: AbortSignal;
}

export interface ExtractedFile {
  readonly data: Uint8Array;
  /** Permission bits recorded in the layer. */
  readonly mode: number;
  /** Digest of the platform manifest; undefined on a cache hit for a digest-pinned reference. */
  readonly manifestDigest: string | undefined;
  /** True when served from the cache without pulling layers. */
  readonly cached: boolean;
}

export class FileNotInImageError extends RegistryError {
  override readonly name: string = "FileNotInImageError";
  constructor(
    readonly image: string,
    readonly path: string,
    readonly reason: "absent" | "not-regular",
  ) {
    super(
      reason === "absent"
        ? `file ${quoteName(path)} not found in image ${quoteName(image)}`
        : `${quoteName(path)} in image ${quoteName(image)} is not a regular file`,
    );
  }
}

/**
 * Pulls one file out of an image straight from the registry (no containerd), layers searched from
 * the top so later layers and whiteouts win. Results are cached by manifest digest + path, and for
 * digest-pinned references also by that digest, which then needs no network at all.
 */
export async function extractFileFromImage(opts: ExtractFileOptions): Promise<ExtractedFile> {
  const ref = parseImageReference(opts.image);
  const plat = `${opts.platform.os}/${opts.platform.architecture}/${opts.platform.variant ?? ""}`;
  // Entries of one (repository, path, platform) share a prefix, so an update can drop the old version.
  const group = cacheName(`${ref.registry}/${ref.repository} ${opts.filePathInImage} ${plat}`).slice(0, 16);
  const pinnedKey = ref.digest !== undefined ? `${group}-${cacheName(`ref ${ref.digest}`)}` : undefined;
  if (pinnedKey !== undefined) {
    const hit = await readCache(opts, pinnedKey);
    if (hit !== undefined) return { data: hit.data, mode: hit.mode, manifestDigest: undefined, cached: true };
  }
  const resolved = await opts.registry.resolve(opts.image, opts.platform, opts.signal);
  const manifestKey = `${group}-${cacheName(`manifest ${resolved.manifestDigest}`)}`;
  const keys = pinnedKey === undefined ? [manifestKey] : [manifestKey, pinnedKey];
  const hit = await readCache(opts, manifestKey);
  if (hit !== undefined) {
    if (pinnedKey !== undefined) await writeCache(opts, group, keys, hit);
    return { data: hit.data, mode: hit.mode, manifestDigest: resolved.manifestDigest, cached: true };
  }

  const fallback = normalizeTarPath(opts.filePathInImage) === normalizeTarPath(AGENT_PATH) ? KO_AGENT_PATH : undefined;
  let primary: TarLookup = { kind: "absent" };
  let secondary: TarLookup = { kind: "absent" };
  for (const layer of [...resolved.layers].reverse()) {
    opts.signal?.throwIfAborted();
    const tar = decompressLayer(await opts.registry.fetchBlob(resolved.reference, layer.digest, opts.signal), layer.mediaType);
    if (primary.kind === "absent") primary = findInTar(tar, opts.filePathInImage);
    if (fallback !== undefined && secondary.kind === "absent") secondary = findInTar(tar, fallback);
    if (primary.kind === "file" || primary.kind === "not-regular") break;
    if (primary.kind === "whiteout" && (fallback === undefined || secondary.kind !== "absent")) break;
  }
  const primaryFound = primary.kind === "file" || primary.kind === "not-regular";
  const found = primaryFound || fallback === undefined ? primary : secondary;
  if (found.kind === "not-regular") throw new FileNotInImageError(opts.image, opts.filePathInImage, "not-regular");
  if (found.kind !== "file") throw new FileNotInImageError(opts.image, opts.filePathInImage, "absent");
  const file = { data: found.data, mode: found.mode, blobName: `${group}-blob-${cacheName(found.data)}` };
  await writeCache(opts, group, keys, file);
  return { data: file.data, mode: file.mode, manifestDigest: resolved.manifestDigest, cached: false };
}

function cacheName(key: string | Uint8Array): string {
  return sha256Digest(key).slice("sha256:".length);
}

interface CachedFile {
  readonly data: Uint8Array;
  readonly mode: number;
  /** "<group>-blob-<sha256 of data>": the content file that key files name. */
  readonly blobName: string;
}

/**
 * Cache layout in `cacheDir`: small key files ("<group>-<hash of manifest or pinned digest>") hold the
 * name of a content file ("<group>-blob-<sha256>", mode as in the image). Content is re-hashed on
 * every hit, so a damaged cache is a miss, never a broken binary.
 */
async function readCache(opts: ExtractFileOptions, key: string): Promise<CachedFile | undefined> {
  if (opts.hostFs === undefined) return undefined;
  const blobName = (await opts.hostFs.readText(`${opts.cacheDir}/${key}`))?.trim();
  if (blobName === undefined || !/^[0-9a-f]{16}-blob-[0-9a-f]{64}$/.test(blobName)) return undefined;
  const path = `${opts.cacheDir}/${blobName}`;
  const info = await opts.hostFs.stat(path);
  if (info?.kind !== "file") return undefined;
  const data = await opts.hostFs.readFile(path);
  if (data === undefined || cacheName(data) !== blobName.slice(blobName.lastIndexOf("-") + 1)) return undefined;
  return { data, mode: info.mode, blobName };
}

/** Stores the content once, points every key at it, and removes older entries of the same group. */
async function writeCache(opts: ExtractFileOptions, group: string, keys: readonly string[], file: CachedFile): Promise<void> {
  const hostFs = opts.hostFs;
  if (hostFs === undefined) return;
  await hostFs.ensureDir(opts.cacheDir, 0o700);
  const blobPath = `${opts.cacheDir}/${file.blobName}`;
  if ((await hostFs.stat(blobPath))?.kind !== "file") await hostFs.writeFileAtomic(blobPath, file.data, file.mode);
  for (const key of keys) await hostFs.writeFileAtomic(`${opts.cacheDir}/${key}`, file.blobName, 0o600);
  const keep = new Set([file.blobName, ...keys]);
  for (const name of (await hostFs.list(opts.cacheDir)) ?? []) {
    if (name.startsWith(`${group}-`) && !keep.has(name)) await hostFs.removeAll(`${opts.cacheDir}/${name}`);
  }
}
