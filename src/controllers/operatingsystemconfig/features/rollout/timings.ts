import { parseDuration } from "../../../../config/index.ts";

/** The clock constants of chunked rollouts (issue 16); tests shorten them, production uses the defaults. */
export interface RolloutTimings {
  /** Ready and SystemdUnitsReady must have been True this long before a slot is released. */
  readonly healthyForMs: number;
  /** A slot not healthy this long after it was taken becomes `failed`. */
  readonly verifyTimeoutMs: number;
  /** applying/verifying/waiting entries are renewed at least this often. */
  readonly renewEveryMs: number;
  /** An entry not renewed this long is stale: active ones count as failed, waiting ones are ignored. */
  readonly staleAfterMs: number;
  /** How often a verifying node looks at its Node again. */
  readonly verifyPollMs: number;
}

export const defaultRolloutTimings: RolloutTimings = {
  healthyForMs: 60_000,
  verifyTimeoutMs: 600_000,
  renewEveryMs: 30_000,
  staleAfterMs: 300_000,
  verifyPollMs: 5_000,
};

const keys: Record<string, keyof RolloutTimings> = {
  healthyFor: "healthyForMs",
  verifyTimeout: "verifyTimeoutMs",
  renewEvery: "renewEveryMs",
  staleAfter: "staleAfterMs",
  verifyPoll: "verifyPollMs",
};

export class RolloutTimingsError extends Error {
  override readonly name = "RolloutTimingsError";
}

/**
 * `healthyFor=2s,verifyTimeout=30s,…` (Go durations) over the defaults — the test-only override the
 * CLI passes from GARDENER_NODE_AGENT_ROLLOUT_TIMINGS (cli/env.ts). Unknown keys and bad durations
 * are errors that name the timing, never its value.
 */
export function parseRolloutTimings(text: string): RolloutTimings {
  const out: { -readonly [K in keyof RolloutTimings]: number } = { ...defaultRolloutTimings };
  for (const part of text
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "")) {
    const [k, v] = part.split("=", 2);
    const field = keys[k ?? ""];
    if (field === undefined || v === undefined)
      throw new RolloutTimingsError(`unknown rollout timing "${k ?? ""}" (known: ${Object.keys(keys).join(", ")})`);
    let ms: number;
    try {
      ms = parseDuration(v);
    } catch {
      // The duration parser's message quotes the value; this error names only the timing.
      throw new RolloutTimingsError(`rollout timing ${k} is not a duration`);
    }
    if (!(ms > 0)) throw new RolloutTimingsError(`rollout timing ${k} must be positive`);
    out[field] = ms;
  }
  return out;
}
