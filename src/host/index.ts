export { createHostFs } from "./host-fs.ts";
export { HostFileKindError, HostPathError, sameStamp } from "./types.ts";
export type { ChunkedData, FileInfo, FileStamp, FileWrite, HostFs } from "./types.ts";
export { createMounts, type Mounts, UnmountError } from "./mounts.ts";
export { FS_APPEND_FL, FS_IMMUTABLE_FL } from "./attribute-flags.ts";
