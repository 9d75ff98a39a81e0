export { createHostFs, type HostFsOptions } from "./host-fs.ts";
export { HostFileKindError, HostPathError } from "./types.ts";
export type { FileInfo, FileWrite, HostFs } from "./types.ts";
export { loadSyncfs, type Syncfs } from "./syncfs.ts";
export { createMounts, parseProcMounts, UnmountError, type Mounts } from "./mounts.ts";
