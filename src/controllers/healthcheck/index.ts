export { createCtrVersionProbe } from "./containerd-probe.ts";
export type { ContainerdEndpoint } from "./containerd-probe.ts";
export { setupHealthCheckController } from "./setup.ts";
