export { basicAuthorization, parseChallenge } from "./auth.ts";
export type { Challenge, Credentials } from "./auth.ts";
export { createRegistryClient, registryOver } from "./client.ts";
export {
  cosignPublicKeyPath,
  cosignSignatureTag,
  createAgentImageVerifier,
  derToRawSignature,
  ImageSignatureError,
  importCosignPublicKey,
  importSigningKey,
  rawToDerSignature,
  signPayload,
  simpleSigningPayload,
  verifyImageSignature,
} from "./cosign.ts";
export type { VerifiedImage } from "./cosign.ts";
export { dockerConfigKeyHost, loadRegistryCredentials, parseDockerConfig, RegistryAuthConfigError, registryAuthPath } from "./docker-config.ts";
export { loadRegistryHosts, parseHostsToml } from "./hosts.ts";
export type { ParsedHostsToml, RegistryEndpoint, RegistryHosts } from "./hosts.ts";
export type { RegistryClientOptions } from "./client.ts";
export { DigestMismatchError, sha256Digest, verifyDigest } from "./digest.ts";
export { isExecutableFor } from "./elf.ts";
export { extractFileFromImage, FileNotInImageError } from "./extract.ts";
export type { ExtractedFile, ExtractFileOptions } from "./extract.ts";
export { decompressLayer } from "./layer.ts";
export { MANIFEST_ACCEPT, MediaType, parseManifest } from "./manifest.ts";
export { platformForArch, platformMatches } from "./platform.ts";
export { formatImageReference, parseImageReference, registryEndpoint } from "./reference.ts";
export { findInTar, normalizeTarPath } from "./tar.ts";
export type { TarLookup } from "./tar.ts";
export { createTransport, RegistryHttpError, RegistryUnreachableError } from "./transport.ts";
export type { FetchFn, RegistryRequest, Transport, TransportOptions } from "./transport.ts";
export { RegistryError } from "./types.ts";
export type { Descriptor, FetchedManifest, ImageReference, Platform, Registry, ResolvedImage } from "./types.ts";
