export { createRegistryClient } from "./client.ts";
export { cosignSignatureTag, createAgentImageVerifier, ImageSignatureError, importSigningKey } from "./cosign.ts";
export {
  loadRegistryCredentials,
  parseDockerConfig,
  RegistryAuthConfigError,
  registryAuthModeProblem,
  registryAuthPath,
} from "./docker-config.ts";
export type { RegistryClientOptions } from "./client.ts";
export { DigestMismatchError, sha256Digest } from "./digest.ts";
export { isExecutableFor } from "./elf.ts";
export { extractFileFromImage, FileNotInImageError } from "./extract.ts";
export { decompressLayer } from "./layer.ts";
export { createTransport, RegistryHttpError, RegistryUnreachableError } from "./transport.ts";
export type { FetchFn } from "./transport.ts";
export { RegistryError } from "./errors.ts";
export { formatImageReference, parseImageReference, registryEndpoint } from "./reference.ts";
export { machineArch } from "./platform.ts";
