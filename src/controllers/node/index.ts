export { setupNodeController } from "./setup.ts";
export { nodeSelectors } from "./watch.ts";
