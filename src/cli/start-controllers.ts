import type { ControllerDeps, RunningControllers } from "./agent/index.ts";

export type { ControllerDeps, RunningControllers } from "./agent/index.ts";

/**
 * The controller wiring (REST config, caches, bootstrap runnables, controllers), loaded lazily so
 * `--help`, `--version` and `render` never load the Kubernetes, D-Bus or FFI modules. It resolves
 * once everything is started; the run command then reports ready and READY=1. Throwing
 * `RestartRequested` or any error here takes the same shutdown path as `deps.stop`.
 */
export const startControllers = async (deps: ControllerDeps): Promise<RunningControllers> => {
  // The discovery request goes out first; the controller modules load while it is answered.
  const { beginDiscovery } = await import("./agent/discover.ts");
  const discovery = await beginDiscovery(deps);
  deps.onDiscoverySent?.();
  const { startControllers: start } = await import("./agent/index.ts");
  return start(deps, discovery);
};
