// The systemd port. dbus.ts pulls in dbus-next and libsystemd.ts uses bun:ffi: import those lazily
// (`await import("./dbus.ts")`) in commands that need them, never from here at start-up.
export type { Systemd, UnitStatus } from "./types.ts";
export { SystemdJobError } from "./types.ts";
export { OfflineSystemd } from "./offline.ts";
export { unitNameProblem } from "./unit-name.ts";
