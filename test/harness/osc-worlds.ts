import type { ApiServerSim } from "../doubles/apiserver/index.ts";
import { OscWorld } from "../fixtures/osc/harness.ts";
import { useControllerSandboxes } from "./controller-sandbox.ts";

/** One API-server simulator for a test file and the OscWorlds its tests created (disposed after each test). */
export interface OscWorlds {
  /** The simulator; set once the file's beforeAll ran. */
  readonly sim: ApiServerSim;
  /** A fresh OscWorld against the simulator, disposed after the current test. */
  world(opts?: { withNode?: boolean }): Promise<OscWorld>;
}

/**
 * The controller sandboxes' hooks (simulator per file, clean-up after each test) for the in-process
 * OSC reconcile tests, whose machine is an OscWorld. Call at the file's top level.
 */
export function useOscWorlds(): OscWorlds {
  const env = useControllerSandboxes();
  return {
    get sim() {
      return env.sim;
    },
    async world(opts = {}) {
      const w = await OscWorld.create(env.sim, opts);
      env.afterTest(() => w.dispose());
      return w;
    },
  };
}
