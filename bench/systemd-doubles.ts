// The fleet benches' systemd: one double (its own dbus-daemon) per agent, as each node has its own systemd.
// One bus for all would deliver every agent's JobRemoved signals to every agent that holds the match — 200 ×
// what a node's own systemd sends it (28 % of the agents' busy CPU samples in a 200-agent rollout, 2026-11-29).
import { startSystemdDouble, type SystemdDouble } from "../test/doubles/systemd/index.ts";

export interface SystemdDoubles {
  /** The bus address agent `i` connects to. */
  address(i: number): string;
  readonly buses: number;
  stop(): Promise<void>;
}

/** `shared`: one double for all agents (the benches' layout before 2026-11-29 night). Started 20 at a time. */
export async function startSystemdDoubles(agents: number, shared: boolean): Promise<SystemdDoubles> {
  const wanted = shared ? 1 : agents;
  const doubles: SystemdDouble[] = [];
  try {
    for (let started = 0; started < wanted; started += 20)
      doubles.push(...(await Promise.all(Array.from({ length: Math.min(20, wanted - started) }, () => startSystemdDouble()))));
  } catch (err) {
    await Promise.all(doubles.map((d) => d.stop()));
    throw err;
  }
  return {
    address(i) {
      const double = doubles[shared ? 0 : i];
      if (double === undefined) throw new Error(`no systemd double for agent ${i}`);
      return double.address;
    },
    buses: doubles.length,
    stop: async () => {
      await Promise.all(doubles.map((d) => d.stop()));
    },
  };
}
