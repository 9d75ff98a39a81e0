import type { ParsedManifest } from "./manifest.ts";

/** An OCI platform as in image indexes. */
export interface Platform {
  readonly os: string;
  readonly architecture: string;
  readonly variant?: string;
}

/** A parsed image reference: registry host[:port], repository, and a tag or digest. */
export interface ImageReference {
  readonly registry: string;
  readonly repository: string;
  readonly tag?: string;
  readonly digest?: string;
}

export interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly platform?: Platform;
}

/** An image manifest resolved for one platform. */
export interface ResolvedImage {
  readonly reference: ImageReference;
  readonly manifestDigest: string;
  readonly layers: readonly Descriptor[];
}

/** A manifest as fetched: its reference, digest and decoded document. */
export interface FetchedManifest {
  readonly reference: ImageReference;
  readonly digest: string;
  readonly manifest: ParsedManifest;
}

/** Reads images straight from a registry over the OCI distribution API (no containerd). */
export interface Registry {
  /** Resolves tag/digest → (index → this platform's) manifest. */
  resolve(image: string, platform: Platform, signal?: AbortSignal): Promise<ResolvedImage>;
  /**
   * The manifest or index the reference names (tag or digest), as stored: no platform selection.
   * `digest` is the sha256 of its bytes (checked against the reference when it is a digest).
   */
  fetchManifest(image: string, signal?: AbortSignal): Promise<FetchedManifest>;
  /** A blob's bytes, sha256-verified against the digest. */
  fetchBlob(reference: ImageReference, digest: string, signal?: AbortSignal): Promise<Uint8Array>;
}
