export { setupLeaseController } from "./setup.ts";
