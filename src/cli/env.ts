import type { ContainerdEndpoint } from "../controllers/healthcheck/index.ts";
// The timings module alone (no I/O, one small import): run.ts loads this file at start.
import {
  defaultRolloutTimings,
  parseRolloutTimings,
  RolloutTimingsError,
  type RolloutTimings,
} from "../controllers/operatingsystemconfig/features/rollout/timings.ts";

/** The raw process environment, as main.ts snapshots it; only src/cli/ sees this record. */
export type RawEnv = Readonly<Record<string, string | undefined>>;

/** Test sandboxes (several agents on one machine) set this; production uses the kernel hostname. */
const hostnameOverrideEnv = "GARDENER_NODE_AGENT_HOSTNAME";
/** Registries spoken to over plain HTTP (host:port list), for sandboxes and the VM e2e; empty in production. */
const plainHttpRegistriesEnv = "GARDENER_NODE_AGENT_PLAIN_HTTP_REGISTRIES";
/** Shortened chunked-rollout timings for sandboxes and tests (`healthyFor=2s,staleAfter=10s,…`); unset in production. */
const rolloutTimingsEnv = "GARDENER_NODE_AGENT_ROLLOUT_TIMINGS";
/** Drift check period in ms instead of the OSC sync period, for sandboxes and tests. */
const driftCheckPeriodEnv = "GARDENER_NODE_AGENT_DRIFT_CHECK_PERIOD_MS";
/** The unit verification window in ms instead of 30 s (unit-failure-policy: revert), for sandboxes and tests. */
const unitVerifyWindowEnv = "GARDENER_NODE_AGENT_UNIT_VERIFY_WINDOW_MS";

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
  readonly rolloutTimings: RolloutTimings;
  /** Drift check period override; undefined → the OSC sync period. */
  readonly driftCheckPeriodMs: number | undefined;
  /** Unit verification window override; undefined → 30 s. */
  readonly unitVerifyWindowMs: number | undefined;
}

const nonEmpty = (raw: RawEnv, name: string): string | undefined => {
  const v = raw[name];
  return v === undefined || v === "" ? undefined : v;
};

/** A positive whole number of milliseconds, or undefined when unset. */
function positiveMs(raw: RawEnv, name: string): number | undefined {
  const text = nonEmpty(raw, name);
  if (text === undefined) return undefined;
  const ms = /^\d+$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!Number.isSafeInteger(ms) || ms <= 0) throw new EnvError(name, "must be a positive whole number of milliseconds");
  return ms;
}

function rolloutTimings(raw: RawEnv): RolloutTimings {
  const text = nonEmpty(raw, rolloutTimingsEnv);
  if (text === undefined) return defaultRolloutTimings;
  try {
    return parseRolloutTimings(text);
  } catch (err) {
    // RolloutTimingsError names the timing key, never the value; anything else is not shown.
    throw new EnvError(rolloutTimingsEnv, err instanceof RolloutTimingsError ? err.message : "cannot be parsed");
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
    rolloutTimings: rolloutTimings(raw),
    driftCheckPeriodMs: positiveMs(raw, driftCheckPeriodEnv),
    unitVerifyWindowMs: positiveMs(raw, unitVerifyWindowEnv),
  };
}
