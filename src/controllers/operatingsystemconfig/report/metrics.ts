import type { MetricsRegistry } from "../../../server/index.ts";
import type { GateReason } from "../gates/gate.ts";

/** The OSC controller's Prometheus series; the reporter (report/reporter.ts) is their only writer. */
export interface OscMetrics {
  /** gardener_node_agent_osc_apply_duration_seconds{outcome} */
  observeApply(seconds: number, outcome: "applied" | "failed"): void;
  /** gardener_node_agent_osc_applied_timestamp_seconds */
  appliedAt(epochSeconds: number): void;
  /** gardener_node_agent_osc_up_to_date */
  upToDate(value: boolean): void;
  /** gardener_node_agent_osc_held */
  held(value: boolean): void;
  /** gardener_node_agent_osc_gates_open_to_applied_seconds{staged}: the gates opened → the checksum is on the Node. */
  gatesOpenToApplied(seconds: number, staged: boolean): void;
  /** gardener_node_agent_osc_waiting{reason}: 1 for the gate reason the node waits on now, 0 for reasons it waited on before. */
  waiting(reason: GateReason | undefined): void;
}

/** Applies take seconds to minutes (image pulls, restarts, registry probes). */
const applyDurationBuckets: readonly number[] = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

export const noOscMetrics: OscMetrics = {
  observeApply: () => {},
  appliedAt: () => {},
  upToDate: () => {},
  held: () => {},
  gatesOpenToApplied: () => {},
  waiting: () => {},
};

export function createOscMetrics(registry: MetricsRegistry): OscMetrics {
  const duration = registry.histogram({
    name: "gardener_node_agent_osc_apply_duration_seconds",
    help: "Duration of operating system config applies, by outcome (applied, failed).",
    buckets: applyDurationBuckets,
  });
  const appliedTs = registry.gauge({
    name: "gardener_node_agent_osc_applied_timestamp_seconds",
    help: "Unix time the current operating system config was last applied successfully.",
  });
  const upToDate = registry.gauge({
    name: "gardener_node_agent_osc_up_to_date",
    help: "1 when the node runs the operating system config of its Secret, else 0.",
  });
  const held = registry.gauge({
    name: "gardener_node_agent_osc_held",
    help: "1 while the node annotation node-agent.gardener.cloud/hold keeps a new operating system config from being applied.",
  });
  const gatesOpen = registry.histogram({
    name: "gardener_node_agent_osc_gates_open_to_applied_seconds",
    help: "Time from the gates opening to the operating system config recorded as applied, by whether it was staged (true, false).",
    buckets: applyDurationBuckets,
  });
  const waiting = registry.gauge({
    name: "gardener_node_agent_osc_waiting",
    help: "1 for the reason (Node condition reason) a new operating system config waits on now, 0 for reasons it waited on before.",
  });
  let waitingOn: GateReason | undefined;
  // Present from the first scrape, before the first reconcile decided anything.
  upToDate.set(0);
  held.set(0);
  return {
    observeApply: (seconds, outcome) => duration.observe(seconds, { outcome }),
    appliedAt: (s) => appliedTs.set(s),
    upToDate: (b) => upToDate.set(b ? 1 : 0),
    held: (b) => held.set(b ? 1 : 0),
    gatesOpenToApplied: (seconds, staged) => gatesOpen.observe(seconds, { staged: staged ? "true" : "false" }),
    waiting: (reason) => {
      if (waitingOn !== undefined && waitingOn !== reason) waiting.set(0, { reason: waitingOn });
      if (reason !== undefined) waiting.set(1, { reason });
      waitingOn = reason;
    },
  };
}
