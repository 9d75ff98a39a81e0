export { setupNodeController } from "./setup.ts";
