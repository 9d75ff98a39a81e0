import type { KubeObject } from "../../../../kube/index.ts";
import { nameSome } from "./detect.ts";

const driftPolicyAnnotation = "node-agent.gardener.cloud/drift-policy";
export type DriftPolicy = "report" | "repair";

/** `repair` only when the Node asks for it; anything else (absent, unknown value) reports. */
export function driftPolicyOf(node: KubeObject): DriftPolicy {
  return node.metadata.annotations?.[driftPolicyAnnotation] === "repair" ? "repair" : "report";
}

/** What the last drift pass found (and did). */
export interface DriftSummary {
  /** Wall-clock ms of the pass. */
  readonly at: number;
  /** Drifted paths found, with their kind: "/etc/a (content)". */
  readonly found: readonly string[];
  readonly policy: DriftPolicy;
  /** Set when a repair ran: the units it restarted or stopped, and what still differed afterwards. */
  readonly repair?: { readonly restarted: readonly string[]; readonly remaining: number } | { readonly failed: string };
}

/** Shared between the drift runner (writes) and whoever reports the apply condition (reads). */
export interface DriftStatus {
  current(): DriftSummary | undefined;
  record(summary: DriftSummary): void;
}

export function createDriftStatus(): DriftStatus {
  let last: DriftSummary | undefined;
  return {
    current: () => last,
    record: (s) => {
      last = s;
    },
  };
}

/**
 * The drift part of the OperatingSystemConfigApplied condition's message, undefined when the last pass
 * found nothing (or none ran yet). At most `limit` paths are named, then a count.
 */
export function driftConditionMessage(status: DriftStatus, limit = 20): string | undefined {
  const s = status.current();
  if (s === undefined || s.found.length === 0) return undefined;
  const what = `${s.found.length} managed path(s) drifted from the last-applied operating system config: ${nameSome(s.found, limit)}`;
  const repair = s.repair;
  if (repair === undefined) return what;
  if ("failed" in repair) return `${what}; repair failed: ${repair.failed}`;
  return repair.remaining === 0 ? `${what}; repaired` : `${what}; repaired, ${repair.remaining} still differ`;
}
