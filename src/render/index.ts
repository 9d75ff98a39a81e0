export { filesToDiskScript, unitsToDiskScript, wrapProvisionOscIntoOneshotScript } from "./bash.ts";
export { renderCloudConfig } from "./cloud-config.ts";
export { resolveFile, resolveUnit } from "./content.ts";
export { RenderError } from "./errors.ts";
export type { RenderErrorKind } from "./errors.ts";
export { renderUserData, renderUserDataGzip } from "./render.ts";
export type { RenderOptions, UserDataFormat } from "./render.ts";
export {
  bootstrapTokenPath,
  bootstrapTokenPlaceholder,
  buildProvisionOsc,
  clusterCaPath,
  initScriptImagePlaceholder,
  initScriptPath,
  initScriptRegistryCaPlaceholder,
  initUnitContentFor,
  initUnitName,
  machineNamePath,
  machineNamePlaceholder,
  renderInitConfig,
  compactShell,
  initScriptForUserData,
  renderInitScript,
  updateCaScript,
  updateCaScriptPath,
} from "./provision.ts";
export type { ProvisionInput } from "./provision.ts";
export { parseRenderSecrets } from "./secrets.ts";
