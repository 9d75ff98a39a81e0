export { startRegistry } from "./registry.ts";
export type { RegistryDouble } from "./registry.ts";
export { fakeElf } from "./fake-binary.ts";
export { writeTestLayout } from "./image.ts";
export type { TestPlatformImage } from "./image.ts";
