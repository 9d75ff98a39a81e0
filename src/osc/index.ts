export { type AttemptedWrites, type ChangedUnit, decodeChanges, emptyChanges, encodeChanges, type OscChanges, type UnitCommand } from "./changes.ts";
export { decodeBase64Strict, decodeInline } from "./content.ts";
export { decodeOsc, issuesMessage } from "./decode.ts";
export { encodeOsc, oscToPlain } from "./encode.ts";
export { Base64Error, InvalidCodecError, OscDecodeError } from "./errors.ts";
export {
  type ContainerdConfig,
  type CriConfig,
  type DropIn,
  type FileContent,
  type Osc,
  oscApiVersion,
  type OscFile,
  oscKind,
  oscSchema,
  type OscSpec,
  type OscStatus,
  type PluginConfig,
  type RegistryConfig,
  type RegistryHost,
  type Unit,
} from "./schema.ts";
export { readYaml } from "./yaml-read.ts";
