export { createHostFs } from "./host-fs.ts";
export { HostFileKindError, HostPathError } from "./types.ts";
export type { FileWrite, HostFs } from "./types.ts";
export { createMounts, UnmountError, type Mounts } from "./mounts.ts";
