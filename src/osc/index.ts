export {
  type AttemptedWrites,
  type ChangedUnit,
  decodeChanges,
  emptyChanges,
  encodeChanges,
  encodeChangesChunked,
  type OscChanges,
} from "./changes.ts";
export { checkInline, decodeBase64Strict, decodeCheckedBase64Into, decodeInline } from "./content.ts";
export { decodeOsc, issuesMessage } from "./decode.ts";
export { encodeOsc, encodeOscChunked } from "./encode.ts";
export { Base64Error, InvalidCodecError, OscDecodeError } from "./errors.ts";
export type { CriConfig, DropIn, Osc, OscFile, PluginConfig, RegistryConfig, Unit } from "./schema.ts";
export { readYaml } from "./yaml-read.ts";
export { digestEncoding, digestFile, digestOsc, hasDigests, isDigested } from "./digest.ts";
