import type { ApiServerSim } from "../doubles/apiserver/index.ts";

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

/** Polls (deadline, no fixed sleep as the wait) until an event matches; returns it. */
export async function waitForEvent(sim: ApiServerSim, match: (e: RecordedEvent) => boolean, timeoutMs: number, describe = ""): Promise<RecordedEvent> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = nodeEvents(sim).find(match);
    if (found !== undefined) return found;
    if (Date.now() > deadline) {
      const seen = nodeEvents(sim).map((e) => `${e.reason}: ${e.message}`).join("\n");
      throw new Error(`no matching event ${describe} within ${timeoutMs} ms; events:\n${seen}`);
    }
    await Bun.sleep(25);
  }
}

/** Polls until `check` returns true (deadline). */
export async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await Bun.sleep(25);
  }
}
