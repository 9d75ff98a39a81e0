export { bootstrap, BootstrapError } from "./bootstrap.ts";
export type { BootstrapConfig, BootstrapDeps } from "./bootstrap.ts";
export {
  copyMountPoint,
  DataDeviceError,
  kubeletDataVolumeLabel,
  lsblkDisksArgv,
  lsblkMountsArgv,
  prepareKubeletDataDevice,
  selectCandidates,
} from "./data-device.ts";
export type { DataDeviceDeps, DataDeviceErrorKind, DataDeviceOutcome } from "./data-device.ts";
export { parseLsblkPairs } from "./lsblk.ts";
export type { LsblkRow } from "./lsblk.ts";
export * from "./paths.ts";
export { ConnectivityError, createConnectivityProbe, probeTimeoutMs } from "./probe.ts";
export type { ApiServerEndpoint, ConnectivityProbe, ProbeDeps, ProbeFetch } from "./probe.ts";
export { createProcessRunner, formatArgv } from "./runner.ts";
export type { CommandRunner, RunResult } from "./runner.ts";
export { agentUnitContent } from "./unit.ts";
export { agentBinaryPath, agentWantsLink, installAgent } from "./install.ts";
