// The agent's wiring (the default command's controllers): loaded lazily by ../start-controllers.ts.
export { startControllers } from "./start.ts";
export type { ControllerDeps, RunningControllers } from "./deps.ts";
