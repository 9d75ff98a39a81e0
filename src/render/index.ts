export { filesToDiskScript, unitsToDiskScript, wrapProvisionOscIntoOneshotScript } from "./bash.ts";
export { renderCloudConfig } from "./cloud-config.ts";
export { resolveFile, resolveUnit } from "./content.ts";
export { RenderError } from "./errors.ts";
export { renderUserData, renderUserDataGzip } from "./render.ts";
export {
  buildProvisionOsc,
  initScriptForUserData,
  initScriptImagePlaceholder,
  initScriptRegistryCaPlaceholder,
  renderInitConfig,
} from "./provision.ts";
export { parseRenderSecrets } from "./secrets.ts";
