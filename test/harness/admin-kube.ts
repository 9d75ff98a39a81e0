import { afterAll, beforeAll } from "bun:test";
import { KubeClient } from "../../src/kube/index.ts";
import { type ApiServerSim, startApiServer } from "../doubles/apiserver/index.ts";

type ApiServerOptions = Parameters<typeof startApiServer>[0];

/** The agent's client as the simulator's admin, unthrottled: a test's own requests never wait for the rate limiter. */
export const adminKube = (sim: ApiServerSim): KubeClient =>
  new KubeClient({
    config: { server: sim.url, caPem: sim.caPem, credentials: { kind: "token", token: sim.adminToken } },
    qps: 1000,
    burst: 1000,
  });

/**
 * A simulator and its admin client for the enclosing describe block (or file): started before its first test,
 * closed after its last. Read `sim` and `kube` inside tests and hooks only.
 */
export function useAdminSim(opts?: ApiServerOptions): { readonly sim: ApiServerSim; readonly kube: KubeClient } {
  let started: { sim: ApiServerSim; kube: KubeClient } | undefined;
  beforeAll(async () => {
    const sim = await startApiServer(opts);
    started = { sim, kube: adminKube(sim) };
  });
  afterAll(async () => {
    started?.kube.close();
    await started?.sim.stop();
    started = undefined;
  });
  const get = () => {
    if (started === undefined) throw new Error("useAdminSim: read outside the describe block's tests");
    return started;
  };
  return {
    get sim() {
      return get().sim;
    },
    get kube() {
      return get().kube;
    },
  };
}
