import { hostname } from "node:os";
import type { AgentEnv } from "../env.ts";

/**
 * The agent's identity on the Node label: the OS hostname (or GARDENER_NODE_AGENT_HOSTNAME in test
 * sandboxes), lower-cased (spec §7.1 step 4). Read again on each call: the hostname-check
 * controller compares it with the start-up value.
 */
export const hostNameOf = (env: Pick<AgentEnv, "hostNameOverride">): string => (env.hostNameOverride ?? hostname()).toLowerCase();
