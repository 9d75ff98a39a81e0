export { setupSystemdUnitCheckController } from "./setup.ts";
