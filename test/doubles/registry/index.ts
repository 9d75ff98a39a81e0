export { startRegistry } from "./registry.ts";
export type { RegistryDouble, StartRegistryOptions } from "./registry.ts";
export { startTokenServer } from "./token-server.ts";
export type { TokenServer, TokenServerOptions } from "./token-server.ts";
export { fakeElf } from "./fake-binary.ts";
export { writeTestLayout } from "./image.ts";
export type { TestLayer, TestPlatformImage } from "./image.ts";
