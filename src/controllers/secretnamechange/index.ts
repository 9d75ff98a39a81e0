export { setupSecretNameChangeController } from "./setup.ts";
