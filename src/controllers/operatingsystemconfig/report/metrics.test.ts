import { describe, expect, test } from "bun:test";
import { createMetricsRegistry } from "../../../server/index.ts";
import { createOscMetrics } from "./metrics.ts";

const waitingLines = async (r: ReturnType<typeof createMetricsRegistry>) =>
  (await r.render()).split("\n").filter((l) => l.startsWith("gardener_node_agent_osc_waiting{"));

describe("gardener_node_agent_osc_waiting", () => {
  test("should be 1 for the reason waited on now and 0 for the reasons waited on before", async () => {
    const r = createMetricsRegistry();
    const m = createOscMetrics(r);
    expect(await waitingLines(r)).toEqual([]);
    m.waiting("WaitingForSerialLock");
    m.waiting("WaitingForRolloutSlot");
    expect(await waitingLines(r)).toEqual([
      'gardener_node_agent_osc_waiting{reason="WaitingForSerialLock"} 0',
      'gardener_node_agent_osc_waiting{reason="WaitingForRolloutSlot"} 1',
    ]);
    m.waiting(undefined);
    expect(await waitingLines(r)).toEqual([
      'gardener_node_agent_osc_waiting{reason="WaitingForSerialLock"} 0',
      'gardener_node_agent_osc_waiting{reason="WaitingForRolloutSlot"} 0',
    ]);
  });
});
