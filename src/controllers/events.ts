import type { Clock } from "../clock/index.ts";
import { events as eventsResource, kubeTime } from "../kube/index.ts";
import type { Kube, KubeObject } from "../kube/index.ts";
import type { Logger } from "../log/index.ts";

export type EventType = "Normal" | "Warning";

/** The object an event is about; for the cluster-scoped Node the event lives in namespace `default`. */
export interface InvolvedObject {
  readonly kind: string;
  readonly apiVersion: string;
  readonly name: string;
  readonly namespace?: string;
  readonly uid?: string;
}

export interface EventRecorder {
  /** Best effort: a failure to record is logged, never thrown (events must not break a reconcile). */
  event(obj: InvolvedObject, type: EventType, reason: string, action: string, note: string): Promise<void>;
}

/** One Event as written: `count` occurrences between the first and the last timestamp (core/v1 aggregation). */
export interface EventRecord {
  readonly obj: InvolvedObject;
  readonly type: EventType;
  readonly reason: string;
  readonly action: string;
  readonly note: string;
  readonly count: number;
  readonly firstMs: number;
  readonly lastMs: number;
}

/** A recorder that can also write an already aggregated record (what the queued recorder sends through). */
export interface EventWriter extends EventRecorder {
  write(record: EventRecord): Promise<void>;
}

/** RFC 3339 with whole seconds, as metav1.Time serialises. */

/** The Node as an event target. */
export const nodeRef = (node: KubeObject): InvolvedObject => ({
  kind: "Node",
  apiVersion: "v1",
  name: node.metadata.name ?? "",
  ...(node.metadata.uid !== undefined ? { uid: node.metadata.uid } : {}),
});

/** Records core/v1 Events through the API (what client-go's event recorder writes). */
export function createEventRecorder(deps: {
  readonly kube: Kube;
  readonly clock: Clock;
  readonly log: Logger;
  readonly component: string;
  readonly host: string;
}): EventWriter {
  // client-go names events <object>.<UnixNano hex>; our clock has ms, so a per-recorder sequence (from a
  // random start, for several recorders in one process) fills the nanoseconds and keeps names unique.
  let seq = Math.floor(Math.random() * 1_000_000);
  const write = async (r: EventRecord): Promise<void> => {
    const { obj, reason } = r;
    const namespace = obj.namespace ?? "default";
    seq = (seq + 1) % 1_000_000;
    const suffix = (BigInt(r.firstMs) * 1_000_000n + BigInt(seq)).toString(16);
    const ev: KubeObject = {
      apiVersion: "v1",
      kind: "Event",
      metadata: { name: `${obj.name}.${suffix}`, namespace },
      involvedObject: {
        kind: obj.kind,
        apiVersion: obj.apiVersion,
        name: obj.name,
        ...(obj.namespace !== undefined ? { namespace: obj.namespace } : {}),
        ...(obj.uid !== undefined ? { uid: obj.uid } : {}),
      },
      reason,
      message: r.note,
      type: r.type,
      action: r.action,
      source: { component: deps.component, host: deps.host },
      reportingComponent: deps.component,
      reportingInstance: deps.host,
      firstTimestamp: kubeTime(r.firstMs),
      lastTimestamp: kubeTime(r.lastMs),
      count: r.count,
    };
    try {
      await deps.kube.create(eventsResource, namespace, ev);
    } catch (err) {
      // Events are diagnostics: failing the reconcile because one could not be written would hide the real outcome.
      deps.log.error("Failed to record event", { err, reason, object: obj.name });
    }
  };
  return {
    write,
    event(obj, type, reason, action, note) {
      const now = deps.clock.now();
      return write({ obj, type, reason, action, note, count: 1, firstMs: now, lastMs: now });
    },
  };
}
