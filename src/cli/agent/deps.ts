import type { NodeAgentConfiguration } from "../../config/index.ts";
import type { Logger } from "../../log/index.ts";
import type { HealthChecks, MetricsRegistry } from "../../server/index.ts";
import type { AgentEnv } from "../env.ts";

/** Everything the run command hands to the controller wiring. */
export interface ControllerDeps {
  readonly config: NodeAgentConfiguration;
  /** Host path of the config file that was read (the secret-name-change controller rewrites it). */
  readonly configPath: string;
  /** `--root`: every host path is resolved under it. */
  readonly root: string;
  /** The environment, parsed once by the run command (cli/env.ts). */
  readonly env: AgentEnv;
  readonly version: string;
  readonly log: Logger;
  /** Add `informer-sync` etc. here; healthz `ping` exists already. */
  readonly health: HealthChecks;
  readonly metrics: MetricsRegistry;
  /** Aborted when the process is stopping (signal, restart request, fatal error). */
  readonly signal: AbortSignal;
  /**
   * Ends the process cleanly: `RestartRequested` → exit 0 (systemd starts it again after 5 s);
   * any other error → logged, exit 1.
   */
  readonly stop: (reason: Error) => void;
  /**
   * Called once the node discovery request is on its way (before the controller modules load); the
   * run command starts its servers then, so their set-up overlaps the request's round trip.
   */
  readonly onDiscoverySent?: () => void;
  /**
   * Called once every controller is set up, so every informer is registered: from then on /readyz is
   * upstream's `informer-sync` alone (bootstrap-and-config §7.1 step 7), not the controllers' start.
   */
  readonly onSetUp?: () => void;
}

export interface RunningControllers {
  /** Settles when every controller has finished after `signal` aborted (waited for at most 5 s). */
  readonly stopped: Promise<void>;
}
