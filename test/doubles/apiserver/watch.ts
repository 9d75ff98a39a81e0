/** Watch streams: newline-delimited JSON events, replay, bookmarks, resume, 410 on expired versions, faults. */
import type { ResourceDef } from "./resources.ts";
import type { Selector } from "./selectors.ts";
import type { Obj, SimStore, StoreEvent } from "./store.ts";
import { apiVersionOfDef, storageOf } from "./resources.ts";
import { withWireDefaults } from "./wire-defaults.ts";
import { toView } from "./event-view.ts";
import { matchSelector } from "./selectors.ts";
import { expired, tooLargeResourceVersion } from "./status.ts";

export interface WatchParams {
  readonly def: ResourceDef;
  /** "" = all namespaces (or cluster-scoped). */
  readonly namespace: string;
  readonly selector: Selector;
  /** undefined or 0 → replay existing objects as ADDED first. */
  readonly fromRv: number | undefined;
  readonly bookmarks: boolean;
  /** sendInitialEvents=true (given or defaulted): with bookmarks, the replay ends with the initial-events-end bookmark. */
  readonly sendInitialEvents: boolean;
  readonly timeoutMs: number;
}

type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";

const enc = new TextEncoder();
const encodeEvent = (type: WatchEventType, object: Obj): Uint8Array => enc.encode(`${JSON.stringify({ type, object })}\n`);

/** All open watches; the fault injection levers act on it. */
export class WatchHub {
  readonly watchers = new Set<Watcher>();
  /**
   * The encoded watch event of a store event, per view and event type: every watcher that sees an event the
   * same way sends the same bytes, so it is serialized once (a Lease change fans out to every agent's watch).
   */
  private readonly encoded = new WeakMap<StoreEvent, Map<string, Uint8Array>>();
  /**
   * Open watchers by the stored resource they watch, fed by one store subscription: a store event visits only
   * the watchers of its resource (with 200 agents each watching its Node and the pool's Lease, every event
   * visited all 400 of them, issue 25). Delivery is the same as each watcher subscribing itself.
   */
  private readonly byResource = new Map<ResourceDef, Set<Watcher>>();
  private unsubscribeStore: (() => void) | undefined;
  private stallTimer: ReturnType<typeof setTimeout> | undefined;
  private stalled = false;

  constructor(
    readonly store: SimStore,
    readonly bookmarkIntervalMs: number,
  ) {}

  isStalled(): boolean {
    return this.stalled;
  }

  /** Stops delivering events (connections stay open) for `ms`; queued events are delivered afterwards. */
  stall(ms: number): void {
    this.stalled = true;
    clearTimeout(this.stallTimer);
    this.stallTimer = setTimeout(() => this.unstall(), ms);
  }

  unstall(): void {
    clearTimeout(this.stallTimer);
    this.stalled = false;
    for (const w of this.watchers) w.flush();
  }

  /** Ends every open watch now: cleanly (end of stream) or abruptly (connection reset). */
  dropAll(abrupt = false): number {
    const n = this.watchers.size;
    for (const w of [...this.watchers]) w.close(abrupt);
    return n;
  }

  encodedEvent(e: StoreEvent, view: ResourceDef, type: WatchEventType, object: () => Obj): Uint8Array {
    let byView = this.encoded.get(e);
    if (byView === undefined) this.encoded.set(e, (byView = new Map()));
    const key = `${view.group}/${view.version}/${view.resource} ${type}`;
    let chunk = byView.get(key);
    if (chunk === undefined) byView.set(key, (chunk = encodeEvent(type, object())));
    return chunk;
  }

  /** `w` receives the store's events of `stored` (a storage definition) from now on, until `detach`. */
  attach(w: Watcher, stored: ResourceDef): void {
    let ws = this.byResource.get(stored);
    if (ws === undefined) this.byResource.set(stored, (ws = new Set()));
    ws.add(w);
    this.unsubscribeStore ??= this.store.subscribe((e) => {
      // Removing a watcher while iterating (it closed) is safe for a Set; one added now skips this event by its version.
      for (const x of this.byResource.get(e.def) ?? []) x.deliver(e);
    });
  }

  detach(w: Watcher, stored: ResourceDef): void {
    this.byResource.get(stored)?.delete(w);
  }

  open(p: WatchParams): Watcher {
    const w = new Watcher(this, p);
    this.watchers.add(w);
    w.start();
    return w;
  }

  stop(): void {
    clearTimeout(this.stallTimer);
    this.dropAll();
    this.unsubscribeStore?.();
    this.unsubscribeStore = undefined;
  }
}

export class Watcher {
  private controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  private readonly pending: Uint8Array[] = [];
  private unsubscribe: (() => void) | undefined;
  private timers: ReturnType<typeof setTimeout>[] = [];
  private closed = false;
  /** Events up to this version are covered by the replay or the history (set by `start`). */
  private after = 0;
  private readonly stored: ResourceDef;
  /**
   * The name a `metadata.name=<name>` field selector requires (every agent watches its Node and the pool's
   * Lease so): an object of another name is rejected before the full selector match.
   */
  private readonly requiredName: string | undefined;
  readonly stream: ReadableStream<Uint8Array>;

  constructor(
    private readonly hub: WatchHub,
    private readonly p: WatchParams,
  ) {
    this.stored = storageOf(p.def);
    this.requiredName = p.selector.fields.find((r) => r.field === "metadata.name" && r.op === "=")?.value;
    this.stream = new ReadableStream<Uint8Array>({
      start: (c) => {
        this.controller = c;
      },
      cancel: () => this.cleanup(),
    });
  }

  /** The watched resource (what `openWatches` counts by). */
  get resource(): string {
    return this.p.def.resource;
  }

  private inScope(def: ResourceDef, o: Obj): boolean {
    if (def !== this.stored) return false;
    const ns = (o["metadata"] as Obj)["namespace"];
    return this.p.namespace === "" || ns === this.p.namespace;
  }

  private matches(o: Obj): boolean {
    if (this.requiredName !== undefined && (o["metadata"] as Obj)["name"] !== this.requiredName) return false;
    return matchSelector(this.p.def.resource, this.p.selector, o);
  }

  /** A store event of the watched resource (WatchHub `attach`). */
  deliver(e: StoreEvent): void {
    if (e.rv <= this.after) return;
    const chunk = this.convert(e);
    if (chunk) this.sendChunk(chunk);
  }

  /** Turns a store event into what this watcher sees (kube cacher semantics for selector transitions), encoded. */
  private convert(e: StoreEvent): Uint8Array | undefined {
    if (!this.inScope(e.def, e.object)) return undefined;
    const cur = e.type !== "DELETED" && this.matches(e.object);
    const old = e.prev !== undefined && this.matches(e.prev);
    const view = this.p.def;
    if (cur && !old) return this.hub.encodedEvent(e, view, "ADDED", () => toView(view, e.object));
    if (cur && old) return this.hub.encodedEvent(e, view, "MODIFIED", () => toView(view, e.object));
    if (!cur && old) {
      return this.hub.encodedEvent(e, view, "DELETED", () => {
        const o = structuredClone(e.prev!);
        (o["metadata"] as Obj)["resourceVersion"] = String(e.rv);
        return toView(view, o);
      });
    }
    return undefined;
  }

  start(): void {
    const { p, hub } = this;
    // events up to here are covered by the replay or the history; a future fromRv skips until it is reached
    this.after = Math.max(p.fromRv ?? 0, hub.store.resourceVersion);
    hub.attach(this, this.stored);
    this.unsubscribe = () => hub.detach(this, this.stored);
    if (p.fromRv !== undefined && p.fromRv > hub.store.resourceVersion) {
      // the watch cache waits 3 s for a future revision, then ends the stream with an ERROR event
      this.timers.push(
        setTimeout(() => {
          if (hub.store.resourceVersion >= (p.fromRv ?? 0)) return;
          this.send("ERROR", tooLargeResourceVersion(p.fromRv ?? 0, hub.store.resourceVersion).toStatus() as unknown as Obj);
          this.close();
        }, 3000),
      );
    }
    if (p.fromRv === undefined || p.fromRv === 0) {
      for (const o of hub.store.select(p.def, p.namespace, p.selector)) this.send("ADDED", o);
      if (p.bookmarks && p.sendInitialEvents) this.bookmark(true);
    } else {
      const evs = hub.store.eventsSince(p.fromRv);
      if (evs === "expired") {
        const st = expired(`too old resource version: ${p.fromRv} (${hub.store.oldestResumableVersion})`).toStatus();
        this.send("ERROR", st as unknown as Obj);
        this.close();
        return;
      }
      for (const e of evs) {
        const chunk = this.convert(e);
        if (chunk) this.sendChunk(chunk);
      }
    }
    this.timers.push(setTimeout(() => this.close(), p.timeoutMs));
    if (p.bookmarks && hub.bookmarkIntervalMs > 0) {
      const tick = () => {
        if (!hub.isStalled()) this.bookmark(false);
        this.timers.push(setTimeout(tick, hub.bookmarkIntervalMs));
      };
      this.timers.push(setTimeout(tick, hub.bookmarkIntervalMs));
    }
  }

  /**
   * The cacher's bookmark object is an empty object of the watched type (so it carries the type's zero-value
   * fields). The initial-events-end one is annotated, and the watch handler adds the list blueprint to it.
   */
  private bookmark(initialEventsEnd: boolean): void {
    const metadata: Obj = { resourceVersion: String(this.hub.store.resourceVersion), creationTimestamp: null };
    if (initialEventsEnd)
      metadata["annotations"] = {
        "k8s.io/initial-events-end": "true",
        "kubernetes.io/initial-events-list-blueprint": listBlueprint(this.p.def),
      };
    const stored = storageOf(this.p.def);
    const blank = withWireDefaults(stored.resource, { kind: stored.kind, apiVersion: apiVersionOfDef(stored), metadata });
    this.send("BOOKMARK", toView(this.p.def, blank));
  }

  private send(type: WatchEventType, object: Obj): void {
    this.sendChunk(encodeEvent(type, object));
  }

  private sendChunk(chunk: Uint8Array): void {
    if (this.closed) return;
    if (this.hub.isStalled()) this.pending.push(chunk);
    else this.controller?.enqueue(chunk);
  }

  flush(): void {
    if (this.closed) return;
    for (const c of this.pending.splice(0)) this.controller?.enqueue(c);
  }

  close(abrupt = false): void {
    if (this.closed) return;
    if (!abrupt && !this.hub.isStalled()) this.flush();
    this.cleanup();
    try {
      if (abrupt) this.controller?.error(new Error("watch dropped by fault injection"));
      else this.controller?.close();
    } catch (err) {
      // the consumer already cancelled the stream; nothing left to end
      if (!(err instanceof TypeError)) throw err;
    }
  }

  private cleanup(): void {
    this.closed = true;
    this.unsubscribe?.();
    for (const t of this.timers) clearTimeout(t);
    this.timers = [];
    this.hub.watchers.delete(this);
  }
}

/** An empty list of the watched type as the JSON encoder writes it (nil items, trailing newline), base64. */
function listBlueprint(def: ResourceDef): string {
  const list = { kind: `${def.kind}List`, apiVersion: apiVersionOfDef(def), metadata: {}, items: null };
  return Buffer.from(`${JSON.stringify(list)}\n`).toString("base64");
}
