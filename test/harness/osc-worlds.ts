import { afterAll, afterEach, beforeAll } from "bun:test";
import { type ApiServerSim, startApiServer } from "../doubles/apiserver/index.ts";
import { OscWorld } from "../fixtures/osc/harness.ts";

/** One API-server simulator for a test file and the OscWorlds its tests created (disposed after each test). */
export interface OscWorlds {
  /** The simulator; set once the file's beforeAll ran. */
  readonly sim: ApiServerSim;
  /** A fresh OscWorld against the simulator, disposed after the current test. */
  world(opts?: { withNode?: boolean }): Promise<OscWorld>;
}

/**
 * Registers the set-up shared by the in-process OSC reconcile tests: starts the simulator before the
 * file's tests, stops it after them, disposes every world after each test. Call at the file's top level.
 */
export function useOscWorlds(): OscWorlds {
  let sim: ApiServerSim | undefined;
  const worlds: OscWorld[] = [];
  beforeAll(async () => {
    sim = await startApiServer();
  });
  afterAll(async () => {
    await sim?.stop();
  });
  afterEach(async () => {
    for (const w of worlds.splice(0)) await w.dispose();
  });
  const started = (): ApiServerSim => {
    if (sim === undefined) throw new Error("useOscWorlds: the simulator is not started yet (use it inside a test or hook)");
    return sim;
  };
  return {
    get sim() {
      return started();
    },
    async world(opts = {}) {
      const w = await OscWorld.create(started(), opts);
      worlds.push(w);
      return w;
    },
  };
}
