export { filesToDiskScript, unitsToDiskScript, wrapProvisionOscIntoOneshotScript } from "./bash.ts";
export { renderCloudConfig } from "./cloud-config.ts";
export { resolveFile, resolveUnit } from "./content.ts";
export { RenderError } from "./errors.ts";
export { renderUserData } from "./render.ts";
export { buildProvisionOsc, initScriptImagePlaceholder, initScriptRegistryCaPlaceholder, renderInitConfig, initScriptForUserData } from "./provision.ts";
export { parseRenderSecrets } from "./secrets.ts";
