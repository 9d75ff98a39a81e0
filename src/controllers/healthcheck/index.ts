export { eventAction, maxFailureDurationMs } from "./checker.ts";
export type { HealthChecker } from "./checker.ts";
export { ContainerdChecker, ContainerdRestartError, containerdServiceName } from "./containerd.ts";
export type { ContainerdCheckerDeps, ContainerdVersionProbe } from "./containerd.ts";
export {
  containerdProbeTimeoutMs,
  ContainerdUnreachableError,
  createCtrVersionProbe,
} from "./containerd-probe.ts";
export type { ContainerdEndpoint } from "./containerd-probe.ts";
export { hostInterfaceAddresses } from "./host-addresses.ts";
export { httpGet } from "./http-get.ts";
export type { ListHostAddresses } from "./host-addresses.ts";
export { IpParseError, parseIp, parsePrefixAddr, sameIp } from "./ip.ts";
export type { IpAddr } from "./ip.ts";
export { KubeletChecker, KubeletCheckError, kubeletServiceName } from "./kubelet.ts";
export type { KubeletCheckerDeps } from "./kubelet.ts";
export { kubeletHealthUrl, kubeletProbeTimeoutMs, probeKubelet } from "./kubelet-probe.ts";
export type { ProbeFetch } from "./kubelet-probe.ts";
export { nodeAddresses, nodeReady } from "./node-status.ts";
export { createReconciler, HealthCheckFailedError, HealthCheckNodeError } from "./reconcile.ts";
export type { HealthCheckDeps } from "./reconcile.ts";
export { restartUnit } from "./restart.ts";
export { setupHealthCheckController } from "./setup.ts";
