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

/** Reads images straight from a registry over the OCI distribution API (no containerd). */
export interface Registry {
  /** Resolves tag/digest → (index → this platform's) manifest. */
  resolve(image: string, platform: Platform, signal?: AbortSignal): Promise<ResolvedImage>;
  /** A blob's bytes, sha256-verified against the digest. */
  fetchBlob(reference: ImageReference, digest: string, signal?: AbortSignal): Promise<Uint8Array>;
}

export class RegistryError extends Error {
  override readonly name: string = "RegistryError";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}
