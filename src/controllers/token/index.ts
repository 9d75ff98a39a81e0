export { createTokenFileWriter, setupTokenController } from "./setup.ts";
export { createTokenResync } from "./watch.ts";
