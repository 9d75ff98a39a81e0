export { containerdEndpointFromEnv, createCtrVersionProbe } from "./containerd-probe.ts";
export { setupHealthCheckController } from "./setup.ts";
