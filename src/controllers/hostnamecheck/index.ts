export { setupHostnameCheckController } from "./setup.ts";
