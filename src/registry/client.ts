import type { HostFs } from "../host/index.ts";
import { sha256Digest, verifyDigest } from "./digest.ts";
import { responseErrorCodes } from "./error-body.ts";
import { MANIFEST_ACCEPT, parseManifest } from "./manifest.ts";
import type { DescriptorDoc, ParsedManifest } from "./manifest.ts";
import { loadRegistryHosts } from "./hosts.ts";
import type { RegistryEndpoint } from "./hosts.ts";
import { platformMatches } from "./platform.ts";
import { formatImageReference, parseImageReference } from "./reference.ts";
import { createTransport, RegistryHttpError } from "./transport.ts";
import type { Transport, TransportOptions } from "./transport.ts";
import { RegistryError } from "./errors.ts";
import type { Descriptor, ImageReference, Platform, Registry, ResolvedImage } from "./types.ts";

/** Registries cap manifests at 4 MiB; anything bigger is not a manifest. */
const MAX_MANIFEST_BYTES = 4 << 20;

export interface RegistryClientOptions extends TransportOptions {
  /**
   * containerd's hosts dir (e.g. "/etc/containerd/certs.d" read through HostFs): mirrors listed in
   * `<dir>/<registry>/hosts.toml` are tried first, in order, for the capability a request needs,
   * then the file's `server`, else the registry itself — as `ctr images pull --hosts-dir` does.
   */
  readonly hostsDir?: { readonly hostFs: HostFs; readonly dir: string; readonly pending?: ReadonlyMap<string, string> };
}

export function createRegistryClient(options: RegistryClientOptions = {}): Registry {
  const { hostsDir, ...transportOptions } = options;
  return registryOver(createTransport(transportOptions), hostsDir);
}

/** A Registry over an existing transport (shares its auth cache, e.g. with a pusher). */
function registryOver(transport: Transport, hostsDir?: RegistryClientOptions["hostsDir"]): Registry {
  /** Runs `request` against each candidate endpoint until one succeeds; the last failure is thrown. */
  async function viaEndpoints<T>(
    ref: ImageReference,
    capability: "pull" | "resolve",
    signal: AbortSignal | undefined,
    request: (endpoint: RegistryEndpoint | undefined) => Promise<T>,
  ): Promise<T> {
    const hosts =
      hostsDir === undefined ? undefined : await loadRegistryHosts(hostsDir.hostFs, hostsDir.dir, ref.registry, hostsDir.pending);
    const candidates: (RegistryEndpoint | undefined)[] = [
      ...(hosts?.mirrors.filter((m) => m.capabilities.includes(capability)) ?? []),
      hosts?.server,
    ];
    let lastError: unknown;
    for (const endpoint of candidates) {
      try {
        return await request(endpoint);
      } catch (err) {
        // A mirror that fails (down, 404, bad bytes) is skipped like containerd does; the last error is reported.
        if (signal?.aborted) throw err;
        lastError = err;
      }
    }
    throw lastError;
  }

  function getManifest(ref: ImageReference, reference: string, signal?: AbortSignal): Promise<{ digest: string; parsed: ParsedManifest }> {
    const capability = reference.startsWith("sha256:") ? "pull" : "resolve";
    return viaEndpoints(ref, capability, signal, (endpoint) => getManifestFrom(ref, reference, endpoint, signal));
  }

  async function getManifestFrom(
    ref: ImageReference,
    reference: string,
    endpoint: RegistryEndpoint | undefined,
    signal?: AbortSignal,
  ): Promise<{ digest: string; parsed: ParsedManifest }> {
    const res = await transport.send({
      registry: ref.registry,
      repository: ref.repository,
      path: `/v2/${ref.repository}/manifests/${reference}`,
      headers: { accept: MANIFEST_ACCEPT },
      ...(endpoint ? { endpoint } : {}),
      ...(signal ? { signal } : {}),
    });
    if (!res.ok)
      throw new RegistryHttpError(res.status, `${formatImageReference(ref)} manifest ${reference}`, await responseErrorCodes(res));
    const declared = Number(res.headers.get("content-length") ?? "0");
    if (declared > MAX_MANIFEST_BYTES) throw new RegistryError(`manifest ${reference} is too large (${declared} bytes)`);
    const body = new Uint8Array(await res.arrayBuffer());
    if (body.length > MAX_MANIFEST_BYTES) throw new RegistryError(`manifest ${reference} is too large (${body.length} bytes)`);
    // By digest: the bytes must hash to it. By tag: the registry's header is only advisory, we hash ourselves.
    if (reference.startsWith("sha256:")) verifyDigest(body, reference, `manifest of ${formatImageReference(ref)}`);
    const digest = reference.startsWith("sha256:") ? reference : sha256Digest(body);
    return { digest, parsed: parseManifest(body, res.headers.get("content-type")) };
  }

  return {
    async resolve(image, platform, signal) {
      const ref = parseImageReference(image);
      const top = ref.digest ?? ref.tag ?? "latest";
      let { digest, parsed } = await getManifest(ref, top, signal);
      if (parsed.kind === "index") {
        const entry = pickPlatform(parsed.doc.manifests, platform);
        if (entry === undefined) {
          const offered = parsed.doc.manifests.map((m) => (m.platform ? `${m.platform.os}/${m.platform.architecture}` : "?")).join(", ");
          throw new RegistryError(
            `image ${image} has no manifest for ${platform.os}/${platform.architecture} (offers: ${offered || "none"})`,
          );
        }
        ({ digest, parsed } = await getManifest(ref, entry.digest, signal));
        if (parsed.kind === "index")
          throw new RegistryError(`image ${image}: nested image index for ${platform.architecture} is not supported`);
      }
      return { reference: ref, manifestDigest: digest, layers: parsed.doc.layers.map(toDescriptor) } satisfies ResolvedImage;
    },

    async fetchManifest(image, signal) {
      const ref = parseImageReference(image);
      const { digest, parsed } = await getManifest(ref, ref.digest ?? ref.tag ?? "latest", signal);
      return { reference: ref, digest, manifest: parsed };
    },

    fetchBlob(reference, digest, signal) {
      return viaEndpoints(reference, "pull", signal, async (endpoint) => {
        const res = await transport.send({
          registry: reference.registry,
          repository: reference.repository,
          path: `/v2/${reference.repository}/blobs/${digest}`,
          followRedirects: true,
          ...(endpoint ? { endpoint } : {}),
          ...(signal ? { signal } : {}),
        });
        if (!res.ok)
          throw new RegistryHttpError(res.status, `${formatImageReference(reference)} blob ${digest}`, await responseErrorCodes(res));
        const bytes = new Uint8Array(await res.arrayBuffer());
        verifyDigest(bytes, digest, `blob of ${formatImageReference(reference)}`);
        return bytes;
      });
    },
  };
}

function pickPlatform(manifests: readonly DescriptorDoc[], platform: Platform): Descriptor | undefined {
  return manifests.map(toDescriptor).find((m) => m.platform !== undefined && platformMatches(m.platform, platform));
}

/** Drops keys valibot leaves as `undefined` (exactOptionalPropertyTypes). */
function toDescriptor(d: DescriptorDoc): Descriptor {
  const p = d.platform;
  return {
    mediaType: d.mediaType,
    digest: d.digest,
    size: d.size,
    ...(d.annotations !== undefined ? { annotations: d.annotations } : {}),
    ...(p !== undefined
      ? { platform: { os: p.os, architecture: p.architecture, ...(p.variant !== undefined ? { variant: p.variant } : {}) } }
      : {}),
  };
}
