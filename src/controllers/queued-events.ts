import type { Logger } from "../log/index.ts";
import type { EventRecorder, EventType, InvolvedObject } from "./events.ts";

interface PendingEvent {
  readonly obj: InvolvedObject;
  readonly type: EventType;
  readonly reason: string;
  readonly action: string;
  readonly note: string;
}

export interface QueuedEventRecorder extends EventRecorder {
  /** Waits until everything queued so far was sent (or dropped); used on shutdown. */
  flush(): Promise<void>;
}

/**
 * Events are diagnostics: like client-go's broadcaster, recording one never waits for the API server.
 * Events go into a bounded queue (oldest dropped first when full) that one background loop sends
 * through `inner`, whose client has its own rate limit, so a burst of restart events cannot delay the
 * next reconcile's API requests.
 */
export function createQueuedEventRecorder(inner: EventRecorder, log: Logger, capacity = 1000): QueuedEventRecorder {
  const queue: PendingEvent[] = [];
  let draining: Promise<void> | undefined;
  let dropped = 0;

  const drain = async () => {
    for (let e = queue.shift(); e !== undefined; e = queue.shift()) {
      await inner.event(e.obj, e.type, e.reason, e.action, e.note);
    }
    draining = undefined;
  };

  return {
    async event(obj, type, reason, action, note) {
      queue.push({ obj, type, reason, action, note });
      if (queue.length > capacity) {
        queue.shift();
        dropped += 1;
        if (dropped === 1 || dropped % 100 === 0) log.error("Dropping events, the event queue is full", { dropped, capacity });
      }
      draining ??= drain();
    },
    async flush() {
      while (draining !== undefined) await draining;
    },
  };
}
