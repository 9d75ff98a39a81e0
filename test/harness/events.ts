import type { ApiServerSim } from "../doubles/apiserver/index.ts";
import { eventually } from "./eventually.ts";

export interface RecordedEvent {
  readonly type: string;
  readonly reason: string;
  readonly message: string;
}

/** The Node events stored in the simulator (namespace default), oldest first. */
export function nodeEvents(sim: ApiServerSim): RecordedEvent[] {
  return (sim.store.list("events", { namespace: "default" }) as Record<string, unknown>[]).map((e) => ({
    type: String(e["type"] ?? ""),
    reason: String(e["reason"] ?? ""),
    message: String(e["message"] ?? ""),
  }));
}

/** Waits until a Node event matches and returns it; on timeout the failure lists the events seen. */
export async function waitForEvent(
  sim: ApiServerSim,
  match: (e: RecordedEvent) => boolean,
  timeoutMs: number,
  describe = "",
): Promise<RecordedEvent> {
  const matchOrSeen = (): RecordedEvent | string[] => {
    const all = nodeEvents(sim);
    return all.find(match) ?? all.map((e) => `${e.reason}: ${e.message}`);
  };
  const found = await eventually(`a matching event ${describe}`.trimEnd(), matchOrSeen, {
    until: (v) => !Array.isArray(v),
    timeoutMs,
    intervalMs: 25,
  });
  return found as RecordedEvent;
}
