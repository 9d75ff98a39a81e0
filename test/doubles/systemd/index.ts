export type { FailJobOptions, SystemdAction, SystemdActionName, SystemdFakeControls } from "./actions.ts";
export { startSystemdDouble, type SystemdDouble, type SystemdDoubleOptions } from "./double.ts";
export { FakeSystemd, type FakeSystemdOptions } from "./fake-systemd.ts";
export type { DbusCall } from "./manager-service.ts";
export type { FakeUnit, UnitSeed } from "./model.ts";
export { unitNameFromPath, unitPath } from "./object-path.ts";
