import type { ContainerdEndpoint } from "../controllers/healthcheck/index.ts";
import { type AgentTimings, defaultAgentTimings, parseAgentTimings, TimingsError } from "./timings.ts";

/** The raw process environment, as main.ts snapshots it; only src/cli/ sees this record. */
export type RawEnv = Readonly<Record<string, string | undefined>>;

/** Test sandboxes (several agents on one machine) set this; production uses the kernel hostname. */
const hostnameOverrideEnv = "GARDENER_NODE_AGENT_HOSTNAME";
/** Registries spoken to over plain HTTP (host:port list), for sandboxes and the VM e2e; empty in production. */
const plainHttpRegistriesEnv = "GARDENER_NODE_AGENT_PLAIN_HTTP_REGISTRIES";
/** kubelet's healthz URL instead of http://127.0.0.1:10248/healthz, for sandboxes with one kubelet stand-in per agent. */
const kubeletHealthzEnv = "GARDENER_NODE_AGENT_KUBELET_HEALTHZ_URL";
/** Shortened timings for sandboxes and tests (`healthyFor=2s,unitCheckPeriod=1s,…`, see timings.ts); unset in production. */
const timingsEnv = "GARDENER_NODE_AGENT_TIMINGS";

/** containerd's own defaults when CONTAINERD_ADDRESS / CONTAINERD_NAMESPACE are unset. */
const defaultContainerdAddress = "/run/containerd/containerd.sock";
const defaultContainerdNamespace = "default";

/** An environment variable is set to something the agent cannot use. Names the variable, never its value. */
export class EnvError extends Error {
  override readonly name = "EnvError";
  constructor(
    readonly variable: string,
    reason: string,
  ) {
    super(`environment variable ${variable}: ${reason}`);
  }
}

/**
 * Everything the agent takes from its environment, parsed once in cli/ and handed down as typed
 * options; nothing below cli/ sees the raw record. Unset and empty mean the same (as upstream's
 * `os.Getenv(...) != ""`).
 */
export interface AgentEnv {
  /** GARDENER_NODE_AGENT_HOSTNAME: replaces the kernel hostname (test sandboxes). */
  readonly hostNameOverride: string | undefined;
  /** DBUS_SYSTEM_BUS_ADDRESS: the system bus; unset → the well-known socket. */
  readonly dbusAddress: string | undefined;
  /** CONTAINERD_ADDRESS / CONTAINERD_NAMESPACE with containerd's defaults. */
  readonly containerd: ContainerdEndpoint;
  /** KUBECONFIG: replaces clientConnection.kubeconfig. */
  readonly kubeconfig: string | undefined;
  /** NOTIFY_SOCKET: sd_notify's socket when systemd started us with Type=notify. */
  readonly notifySocket: string | undefined;
  /** WATCHDOG_USEC as given (systemd/notify.ts reads it). */
  readonly watchdogUsec: string | undefined;
  /** PATH: the agent's own, written into containerd's env drop-in. */
  readonly processPath: string;
  readonly plainHttpRegistries: readonly string[];
  /** GARDENER_NODE_AGENT_KUBELET_HEALTHZ_URL: replaces kubelet's healthz URL (test sandboxes). */
  readonly kubeletHealthUrl: string | undefined;
  /** GARDENER_NODE_AGENT_TIMINGS over upstream's clock constants. */
  readonly timings: AgentTimings;
}

const nonEmpty = (raw: RawEnv, name: string): string | undefined => {
  const v = raw[name];
  return v === undefined || v === "" ? undefined : v;
};

function timings(raw: RawEnv): AgentTimings {
  const text = nonEmpty(raw, timingsEnv);
  if (text === undefined) return defaultAgentTimings;
  try {
    return parseAgentTimings(text);
  } catch (err) {
    // TimingsError names the timing key, never the value; anything else is not shown.
    throw new EnvError(timingsEnv, err instanceof TimingsError ? err.message : "cannot be parsed");
  }
}

/** Parses the agent's environment; throws EnvError naming the first bad variable. */
export function parseAgentEnv(raw: RawEnv): AgentEnv {
  return {
    hostNameOverride: nonEmpty(raw, hostnameOverrideEnv),
    dbusAddress: nonEmpty(raw, "DBUS_SYSTEM_BUS_ADDRESS"),
    containerd: {
      address: nonEmpty(raw, "CONTAINERD_ADDRESS") ?? defaultContainerdAddress,
      namespace: nonEmpty(raw, "CONTAINERD_NAMESPACE") ?? defaultContainerdNamespace,
    },
    kubeconfig: nonEmpty(raw, "KUBECONFIG"),
    notifySocket: nonEmpty(raw, "NOTIFY_SOCKET"),
    watchdogUsec: nonEmpty(raw, "WATCHDOG_USEC"),
    processPath: raw["PATH"] ?? "",
    plainHttpRegistries: (raw[plainHttpRegistriesEnv] ?? "").split(",").filter((h) => h !== ""),
    kubeletHealthUrl: nonEmpty(raw, kubeletHealthzEnv),
    timings: timings(raw),
  };
}
