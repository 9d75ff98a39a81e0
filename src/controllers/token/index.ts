export { createTokenFileWriter, setupTokenController } from "./setup.ts";
export type { TokenControllerSetup } from "./setup.ts";
export { TokenDataError, tokenBytes, tokenDataKey, TokenMissingError } from "./token-data.ts";
export {
  controllerName,
  createTokenResync,
  newTokenController,
  reconcileTimeoutMs,
  resyncPredicate,
  secretNamespace,
  startKeys,
  workersFor,
} from "./watch.ts";
export type { TokenResync } from "./watch.ts";
