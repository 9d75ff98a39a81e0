import type { Platform } from "./types.ts";

/** OCI platform for a Node/Bun `process.arch` value; undefined for architectures we do not ship. */
function platformForArch(arch: string): Platform | undefined {
  if (arch === "x64") return { os: "linux", architecture: "amd64" };
  if (arch === "arm64") return { os: "linux", architecture: "arm64" };
  return undefined;
}

/**
 * This machine's architecture in Go/OCI terms (`amd64`, `arm64`): the one mapping from Bun's
 * `process.arch`, for the agent image check, image pulls, `diff --arch` and `--version`.
 */
export function machineArch(nodeArch: string = process.arch): string {
  return platformForArch(nodeArch)?.architecture ?? nodeArch;
}

/** Whether an index entry's platform satisfies the wanted one (arm64 "v8" equals no variant). */
export function platformMatches(candidate: Platform, wanted: Platform): boolean {
  if (candidate.os !== wanted.os || candidate.architecture !== wanted.architecture) return false;
  const norm = (p: Platform) => (p.architecture === "arm64" && p.variant === "v8" ? undefined : p.variant);
  const want = norm(wanted);
  return want === undefined || norm(candidate) === want;
}
