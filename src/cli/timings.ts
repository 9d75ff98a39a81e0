import { parseDuration } from "../config/index.ts";
// The timings module alone (no I/O, one small import): run.ts loads this file at start.
import { defaultRolloutTimings, type RolloutTimings } from "../controllers/operatingsystemconfig/features/rollout/timings.ts";

/**
 * The agent's clock constants that whole-binary tests and sandboxes shorten, in one typed object, so a
 * test sets a 2 s health window instead of sleeping through 60 s. Production runs with the defaults
 * (upstream's values, asserted in timings.test.ts); GARDENER_NODE_AGENT_TIMINGS overrides single ones.
 */
export interface AgentTimings {
  /** Chunked rollouts (issue 16): health window, verification deadline, slot renewal and staleness, verify poll. */
  readonly rollout: RolloutTimings;
  /** How often drift is checked; undefined → `controllers.operatingSystemConfig.syncPeriod`. */
  readonly driftCheckPeriodMs: number | undefined;
  /** unit-failure-policy `revert`: how long a restarted unit must stay active. */
  readonly unitVerifyWindowMs: number;
  /**
   * systemd-unit-check's period (its SystemdUnitsReady heartbeat; a verifying rollout node waits for the
   * check the OSC controller asks for after its apply, not for this period); undefined →
   * `controllers.systemdUnitCheck.syncPeriod`, which validation keeps at 15 s or more.
   */
  readonly unitCheckPeriodMs: number | undefined;
  /**
   * The OSC controller's retry backoff cap after failed reconciles (client-go's per-item 5 ms doubling
   * to 1000 s): after an API-server outage the next apply can otherwise be scheduled minutes out.
   */
  readonly oscBackoffMaxMs: number;
  /** The informers' list/watch retry backoff cap (200 ms doubling to 30 s, +50 % jitter). */
  readonly watchBackoffMaxMs: number;
}

export const defaultAgentTimings: AgentTimings = {
  rollout: defaultRolloutTimings,
  driftCheckPeriodMs: undefined,
  unitVerifyWindowMs: 30_000,
  unitCheckPeriodMs: undefined,
  oscBackoffMaxMs: 1_000_000,
  watchBackoffMaxMs: 30_000,
};

type Setter = (t: Mutable, ms: number) => void;
interface Mutable {
  rollout: { -readonly [K in keyof RolloutTimings]: number };
  driftCheckPeriodMs: number | undefined;
  unitVerifyWindowMs: number;
  unitCheckPeriodMs: number | undefined;
  oscBackoffMaxMs: number;
  watchBackoffMaxMs: number;
}

/** The override keys, as written in GARDENER_NODE_AGENT_TIMINGS. */
const setters: Record<string, Setter> = {
  healthyFor: (t, ms) => (t.rollout.healthyForMs = ms),
  verifyTimeout: (t, ms) => (t.rollout.verifyTimeoutMs = ms),
  renewEvery: (t, ms) => (t.rollout.renewEveryMs = ms),
  staleAfter: (t, ms) => (t.rollout.staleAfterMs = ms),
  verifyPoll: (t, ms) => (t.rollout.verifyPollMs = ms),
  driftCheckPeriod: (t, ms) => (t.driftCheckPeriodMs = ms),
  unitVerifyWindow: (t, ms) => (t.unitVerifyWindowMs = ms),
  unitCheckPeriod: (t, ms) => (t.unitCheckPeriodMs = ms),
  oscBackoffMax: (t, ms) => (t.oscBackoffMaxMs = ms),
  watchBackoffMax: (t, ms) => (t.watchBackoffMaxMs = ms),
};

/** A bad override; the message names the timing, never its value. */
export class TimingsError extends Error {
  override readonly name = "TimingsError";
}

/**
 * `healthyFor=2s,unitCheckPeriod=1s,…` (Go durations) over the defaults. Unknown keys, bad durations
 * and durations that are not positive are errors naming the timing.
 */
export function parseAgentTimings(text: string): AgentTimings {
  const out: Mutable = { ...defaultAgentTimings, rollout: { ...defaultAgentTimings.rollout } };
  for (const part of text
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "")) {
    const [key = "", value] = part.split("=", 2);
    const set = setters[key];
    if (set === undefined || value === undefined)
      throw new TimingsError(`unknown timing "${key}" (known: ${Object.keys(setters).join(", ")})`);
    let ms: number;
    try {
      ms = parseDuration(value);
    } catch {
      // The duration parser's message quotes the value; this error names only the timing.
      throw new TimingsError(`timing ${key} is not a duration`);
    }
    if (!(ms > 0)) throw new TimingsError(`timing ${key} must be positive`);
    set(out, ms);
  }
  return out;
}
