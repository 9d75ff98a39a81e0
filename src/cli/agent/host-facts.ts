import { hostname } from "node:os";

/** Test sandboxes (several agents on one machine) set this; production uses the kernel hostname. */
export const hostnameOverrideEnv = "GARDENER_NODE_AGENT_HOSTNAME";

/** The agent's identity on the Node label: the OS hostname, lower-cased (spec §7.1 step 4). */
export const hostNameOf = (env: Readonly<Record<string, string | undefined>>): string =>
  (env[hostnameOverrideEnv] || hostname()).toLowerCase();

const goArch: Readonly<Record<string, string>> = { x64: "amd64", arm64: "arm64" };

/** This machine's architecture in Go/OCI terms. */
export const machineArch = (): string => goArch[process.arch] ?? process.arch;
