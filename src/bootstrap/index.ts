export { bootstrap } from "./bootstrap.ts";
export { prepareKubeletDataDevice } from "./data-device.ts";
export * from "./paths.ts";
export { createConnectivityProbe } from "./probe.ts";
export type { ConnectivityProbe } from "./probe.ts";
export { createProcessRunner } from "./runner.ts";
export type { CommandRunner } from "./runner.ts";
