import type { Clock } from "../clock/index.ts";
import type { Logger } from "../log/index.ts";
import type { MetricsRegistry } from "../server/index.ts";
import type { EventRecord, EventRecorder, EventType, EventWriter, InvolvedObject } from "./events.ts";

export interface QueuedEventRecorder extends EventRecorder {
  /** Waits until everything queued so far was sent (or dropped); used on shutdown. */
  flush(): Promise<void>;
}

export const eventsDroppedMetric = "gardener_node_agent_events_dropped_total";

/** client-go's EventAggregator defaults: beyond 10 different messages of one reason and object they are combined. */
const maxSimilarPending = 10;
/** The message prefix client-go's aggregator gives a combined event. */
const combinedPrefix = "(combined from similar events): ";

interface Pending {
  readonly obj: InvolvedObject;
  readonly type: EventType;
  readonly reason: string;
  readonly action: string;
  note: string;
  count: number;
  readonly firstMs: number;
  lastMs: number;
  /** Set on the entry that takes every message of its reason and object once `maxSimilarPending` are waiting. */
  readonly combined: boolean;
}

const objectKey = (o: InvolvedObject): string => JSON.stringify([o.kind, o.apiVersion, o.namespace ?? "", o.name, o.uid ?? ""]);
const similarKey = (obj: InvolvedObject, type: EventType, reason: string, action: string): string =>
  JSON.stringify([objectKey(obj), type, reason, action]);
const identicalKey = (similar: string, note: string): string => JSON.stringify([similar, note]);

export interface QueuedEventRecorderOptions {
  readonly clock: Clock;
  readonly log: Logger;
  readonly metrics?: MetricsRegistry;
  /** Pending events (after aggregation) kept at most; beyond, the oldest Normal (else Warning) is dropped. */
  readonly capacity?: number;
}

/**
 * Events are diagnostics: like client-go's broadcaster, recording one never waits for the API server.
 * Events wait in a bounded queue that one background loop sends through `inner`, whose client has its own
 * rate limit (5 QPS), so a burst of restart events cannot delay the next reconcile's API requests.
 * While they wait:
 * - Warnings go first: a failure is not stuck behind hundreds of "processed restart" events.
 * - Repeats are aggregated as client-go's EventCorrelator does: the same object, type, reason, action and
 *   message again raises the waiting event's `count` and `lastTimestamp`; beyond 10 different messages of
 *   one object and reason, the rest go into one "(combined from similar events): <latest>" event.
 * - When full, the oldest Normal event (else the oldest Warning) is dropped, counted in
 *   `gardener_node_agent_events_dropped_total` and logged once per overflow (until the queue empties).
 * Timestamps are taken when an event is recorded, not when it is sent.
 */
export function createQueuedEventRecorder(inner: EventWriter, opts: QueuedEventRecorderOptions): QueuedEventRecorder {
  const { clock, log, capacity = 1000 } = opts;
  const dropCounter = opts.metrics?.counter({
    name: eventsDroppedMetric,
    help: "Number of events the node agent dropped because its event queue was full.",
  });
  dropCounter?.inc(undefined, 0); // a 0 sample from the start, not an absent series
  const warnings: Pending[] = [];
  const normals: Pending[] = [];
  const identical = new Map<string, Pending>();
  const similar = new Map<string, { distinct: number; combined?: Pending }>();
  let draining: Promise<void> | undefined;
  let overflowLogged = false;

  const keysOf = (p: Pending) => {
    const sim = similarKey(p.obj, p.type, p.reason, p.action);
    return { sim, same: identicalKey(sim, p.note) };
  };
  /** Forgets a pending entry that was taken off its queue (sent or dropped). */
  const forget = (p: Pending) => {
    const { sim, same } = keysOf(p);
    const group = similar.get(sim);
    if (p.combined) {
      if (group !== undefined) delete group.combined;
    } else {
      if (identical.get(same) === p) identical.delete(same);
      if (group !== undefined) group.distinct -= 1;
    }
    if (group !== undefined && group.distinct <= 0 && group.combined === undefined) similar.delete(sim);
  };
  const take = (): Pending | undefined => {
    const p = warnings.shift() ?? normals.shift();
    if (p !== undefined) forget(p);
    return p;
  };
  const dropOldest = () => {
    const p = normals.shift() ?? warnings.shift();
    if (p === undefined) return;
    forget(p);
    dropCounter?.inc(undefined, p.count);
    if (!overflowLogged) {
      overflowLogged = true;
      log.error("Dropping events, the event queue is full", { capacity, metric: eventsDroppedMetric });
    }
  };
  const drain = async () => {
    for (let p = take(); p !== undefined; p = take()) {
      const { obj, type, reason, action, note, count, firstMs, lastMs } = p;
      const record: EventRecord = { obj, type, reason, action, note, count, firstMs, lastMs };
      await inner.write(record);
    }
    overflowLogged = false;
    draining = undefined;
  };

  const enqueue = (obj: InvolvedObject, type: EventType, reason: string, action: string, note: string) => {
    const now = clock.now();
    const sim = similarKey(obj, type, reason, action);
    const same = identical.get(identicalKey(sim, note));
    if (same !== undefined) {
      same.count += 1;
      same.lastMs = now;
      return;
    }
    const group = similar.get(sim) ?? { distinct: 0 };
    similar.set(sim, group);
    if (group.distinct >= maxSimilarPending && group.combined !== undefined) {
      group.combined.count += 1;
      group.combined.lastMs = now;
      group.combined.note = combinedPrefix + note;
      return;
    }
    const combined = group.distinct >= maxSimilarPending;
    const p: Pending = {
      obj,
      type,
      reason,
      action,
      note: combined ? combinedPrefix + note : note,
      count: 1,
      firstMs: now,
      lastMs: now,
      combined,
    };
    if (combined) group.combined = p;
    else {
      group.distinct += 1;
      identical.set(identicalKey(sim, note), p);
    }
    (type === "Warning" ? warnings : normals).push(p);
    if (warnings.length + normals.length > capacity) dropOldest();
  };

  return {
    async event(obj, type, reason, action, note) {
      enqueue(obj, type, reason, action, note);
      draining ??= drain();
    },
    async flush() {
      while (draining !== undefined) await draining;
    },
  };
}
