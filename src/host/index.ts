export { createHostFs } from "./host-fs.ts";
export { HostFileKindError, HostPathError } from "./types.ts";
export type { FileInfo, HostFs } from "./types.ts";
