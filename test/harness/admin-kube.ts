import { KubeClient } from "../../src/kube/index.ts";
import type { ApiServerSim } from "../doubles/apiserver/index.ts";

/** The agent's client as the simulator's admin, unthrottled: a test's own requests never wait for the rate limiter. */
export const adminKube = (sim: ApiServerSim): KubeClient =>
  new KubeClient({
    config: { server: sim.url, caPem: sim.caPem, credentials: { kind: "token", token: sim.adminToken } },
    qps: 1000,
    burst: 1000,
  });
