import type { Clock } from "../clock/index.ts";
import type { Logger } from "../log/index.ts";
import { isGone } from "./errors.ts";
import { keyString, type ObjectKey } from "./reconcile.ts";
import type { Resource } from "./resources.ts";
import type { EventSink, Source } from "./source.ts";
import type { DataAsBytes, Kube, KubeList, KubeObject, Selectors, WatchEvent } from "./types.ts";

export interface InformerHandlers<T> {
  onAdd?(obj: T): void;
  onUpdate?(oldObj: T, newObj: T): void;
  onDelete?(obj: T): void;
}

export interface InformerOptions<T extends KubeObject = KubeObject> {
  kube: Kube;
  resource: Resource;
  /** "" for cluster-scoped resources or all namespaces. */
  namespace: string;
  selectors?: Selectors;
  clock: Clock;
  log: Logger;
  /** Re-deliver every cached object as an update this often; 0 (default) = never. */
  resyncPeriodMs?: number;
  /** Error backoff: first delay and cap (default 200 ms → 30 s), with up to +50 % jitter. */
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  /** Server-side watch timeout per request; default random 300–600 s like client-go's reflector. */
  watchTimeoutSeconds?: () => number;
  random?: () => number;
  /**
   * A LIST the caller already made with exactly these selectors (or one returning the same objects
   * at its resourceVersion): it fills the cache and the first watch starts from its resourceVersion,
   * so the informer's own first LIST is not sent.
   */
  initialList?: KubeList<KubeObject>;
  /**
   * Applied to every object before it is cached and handed to handlers (client-go's SetTransform): it
   * may keep less of the object (e.g. a big Secret's data once decoded). It may change the object given.
   */
  transform?: ObjectTransform<T>;
}

/**
 * An informer's transform; its `dataAsBytes` goes to the watch (WatchOptions.dataAsBytes), for the data it
 * decodes, and its `bigEventArriving` too (WatchOptions.onBigEvent), to let go of what it keeps of an object.
 */
export type ObjectTransform<T> = ((obj: T) => T) & { readonly dataAsBytes?: DataAsBytes; readonly bigEventArriving?: () => void };

const objectKey = (o: KubeObject): string => keyString({ namespace: o.metadata.namespace ?? "", name: o.metadata.name ?? "" });

/**
 * List → cache → watch from the list's resourceVersion, for one resource and selector. BOOKMARKs
 * advance the resourceVersion; a closed watch is resumed from it; 410 Gone re-lists and emits the
 * difference to the cache as ADDED/MODIFIED/DELETED; other errors back off with jitter.
 */
export class Informer<T extends KubeObject> implements Source<T> {
  readonly #o: InformerOptions<T>;
  readonly #log: Logger;
  readonly #cache = new Map<string, T>();
  readonly #handlers = new Set<InformerHandlers<T>>();
  readonly #syncWaiters: Array<() => void> = [];
  #rv = "";
  #synced = false;
  #running = false;

  constructor(opts: InformerOptions<T>) {
    this.#o = opts;
    this.#log = opts.log.child({
      informer: opts.resource.resource,
      ...(opts.namespace !== "" ? { namespace: opts.namespace } : {}),
      ...(opts.selectors?.fieldSelector ? { fieldSelector: opts.selectors.fieldSelector } : {}),
      ...(opts.selectors?.labelSelector ? { labelSelector: opts.selectors.labelSelector } : {}),
    });
  }

  get resource(): Resource {
    return this.#o.resource;
  }
  get namespace(): string {
    return this.#o.namespace;
  }
  get selectors(): Selectors {
    return this.#o.selectors ?? {};
  }
  /** The resourceVersion the next watch resumes from. */
  get resourceVersion(): string {
    return this.#rv;
  }

  hasSynced(): boolean {
    return this.#synced;
  }

  /** Resolves once the first list has filled the cache; rejects with the signal's reason on abort. */
  waitForSync(signal: AbortSignal): Promise<void> {
    if (this.#synced) return Promise.resolve();
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const i = this.#syncWaiters.indexOf(done);
        if (i >= 0) this.#syncWaiters.splice(i, 1);
        reject(signal.reason);
      };
      const done = () => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.#syncWaiters.push(done);
    });
  }

  /**
   * Drops the cache and the synced state of an informer that is not running, without emitting anything:
   * its next run starts from a fresh list, as a new informer would (its handlers stay registered).
   */
  forget(): void {
    if (this.#running) throw new Error(`informer for ${this.#o.resource.resource} forgotten while running`);
    this.#cache.clear();
    this.#rv = "";
    this.#synced = false;
  }

  /** Cached object by key (`namespace/name`, or `name` when cluster-scoped). */
  get(key: string | ObjectKey): T | undefined {
    return this.#cache.get(typeof key === "string" ? key : keyString(key));
  }

  list(): T[] {
    return [...this.#cache.values()];
  }

  /** Register handlers; objects already cached are delivered to them as adds at once. */
  addHandler(h: InformerHandlers<T>): () => void {
    this.#handlers.add(h);
    for (const obj of this.#cache.values()) this.#call(h, "onAdd", () => h.onAdd?.(obj));
    return () => {
      this.#handlers.delete(h);
    };
  }

  subscribe(sink: EventSink<T>): () => void {
    return this.addHandler({ onAdd: (o) => sink.create(o), onUpdate: (a, b) => sink.update(a, b), onDelete: (o) => sink.delete(o) });
  }

  /** Run until `signal` aborts; resolves then. */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#running) throw new Error(`informer for ${this.#o.resource.resource} started twice`);
    this.#running = true;
    const resync = this.#resyncLoop(signal);
    let needList = true;
    const initial = this.#o.initialList;
    if (initial !== undefined && !this.#synced) {
      // The caller's objects are T by the same claim kube.list makes for the informer's own LIST.
      this.#replace(initial as KubeList<T>);
      needList = false;
    }
    let failures = 0;
    let goneInARow = 0;
    while (!signal.aborted) {
      try {
        if (needList) {
          await this.#listAndReplace(signal);
          needList = false;
          failures = 0;
        }
        const started = this.#o.clock.now();
        const events = await this.#watchOnce(signal);
        if (events > 0 || this.#o.clock.now() - started >= 1000) {
          failures = 0;
          goneInARow = 0;
          continue; // normal close (server timeout): resume from the last resourceVersion at once
        }
        // Closed at once without a single event: treat like an error so a flapping server is not hammered.
        failures++;
        this.#log.debug("Watch closed without events", { resourceVersion: this.#rv });
      } catch (err) {
        if (signal.aborted) break;
        if (isGone(err)) {
          this.#log.info("Watch resourceVersion expired, re-listing", { resourceVersion: this.#rv });
          needList = true;
          // Re-list at once, as client-go does, unless the fresh resourceVersion expired right away too.
          if (++goneInARow === 1) continue;
        }
        failures++;
        if (!isGone(err)) this.#log.warn("Watch failed, retrying", { err, attempt: failures });
      }
      await this.#backoff(failures, signal);
    }
    await resync;
    this.#running = false;
  }

  async #listAndReplace(signal: AbortSignal): Promise<void> {
    const { kube, resource, namespace, selectors } = this.#o;
    this.#replace(await kube.list<T>(resource, namespace, { ...selectors, signal }));
  }

  #replace(list: KubeList<T>): void {
    const fresh = new Map<string, T>();
    const transform = this.#o.transform;
    for (const item of list.items) fresh.set(objectKey(item), transform === undefined ? item : transform(item));
    const old = new Map(this.#cache);
    this.#cache.clear();
    for (const [k, v] of fresh) this.#cache.set(k, v);
    this.#rv = list.metadata.resourceVersion ?? "";
    // Emit what changed relative to the previous cache (everything is an add on the first list).
    for (const [k, obj] of fresh) {
      const prev = old.get(k);
      if (prev === undefined) this.#emit("onAdd", obj);
      else if (prev.metadata.resourceVersion !== obj.metadata.resourceVersion) this.#emit("onUpdate", prev, obj);
    }
    for (const [k, prev] of old) if (!fresh.has(k)) this.#emit("onDelete", prev);
    if (!this.#synced) {
      this.#synced = true;
      for (const w of this.#syncWaiters.splice(0)) w();
      this.#log.debug("Informer synced", { resourceVersion: this.#rv, objects: this.#cache.size });
    }
  }

  /** One watch request; returns the number of events seen when the server closes it. */
  async #watchOnce(signal: AbortSignal): Promise<number> {
    const { kube, resource, namespace, selectors } = this.#o;
    const timeoutSeconds = this.#o.watchTimeoutSeconds?.() ?? Math.floor(300 + 300 * (this.#o.random ?? Math.random)());
    let n = 0;
    const stream = kube.watch<T>(resource, namespace, {
      ...selectors,
      resourceVersion: this.#rv,
      allowWatchBookmarks: true,
      timeoutSeconds,
      signal,
      ...(this.#o.transform?.dataAsBytes !== undefined ? { dataAsBytes: this.#o.transform.dataAsBytes } : {}),
      ...(this.#o.transform?.bigEventArriving !== undefined ? { onBigEvent: this.#o.transform.bigEventArriving } : {}),
    });
    for await (const ev of stream) {
      n++;
      this.#apply(ev);
    }
    return n;
  }

  #apply(ev: WatchEvent<T>): void {
    const transform = this.#o.transform;
    const obj = transform === undefined || ev.type === "BOOKMARK" ? ev.object : transform(ev.object);
    const rv = obj.metadata.resourceVersion;
    if (rv !== undefined && rv !== "") this.#rv = rv;
    if (ev.type === "BOOKMARK") return;
    const key = objectKey(obj);
    const prev = this.#cache.get(key);
    if (ev.type === "DELETED") {
      this.#cache.delete(key);
      this.#emit("onDelete", obj);
      return;
    }
    this.#cache.set(key, obj);
    if (prev === undefined) this.#emit("onAdd", obj);
    else this.#emit("onUpdate", prev, obj);
  }

  #emit(kind: "onAdd" | "onDelete", obj: T): void;
  #emit(kind: "onUpdate", oldObj: T, newObj: T): void;
  #emit(kind: keyof InformerHandlers<T>, a: T, b?: T): void {
    for (const h of this.#handlers) {
      this.#call(h, kind, () => {
        if (kind === "onUpdate") h.onUpdate?.(a, b ?? a);
        else h[kind]?.(a);
      });
    }
  }

  #call(_h: InformerHandlers<T>, kind: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      // A handler only maps events to keys; a bug in one must not stop the cache from following the server.
      this.#log.error("Informer event handler failed", { err, handler: kind });
    }
  }

  async #backoff(failures: number, signal: AbortSignal): Promise<void> {
    const initial = this.#o.backoffInitialMs ?? 200;
    const max = this.#o.backoffMaxMs ?? 30_000;
    const base = Math.min(max, initial * 2 ** Math.max(0, Math.min(failures - 1, 30)));
    const delay = Math.min(max, base * (1 + 0.5 * (this.#o.random ?? Math.random)()));
    await this.#o.clock.sleep(delay, signal).catch(() => {
      // Aborted: the run loop sees signal.aborted and ends.
    });
  }

  async #resyncLoop(signal: AbortSignal): Promise<void> {
    const period = this.#o.resyncPeriodMs ?? 0;
    if (period <= 0) return;
    while (!signal.aborted) {
      try {
        await this.#o.clock.sleep(period, signal);
      } catch {
        return; // aborted
      }
      if (!this.#synced) continue;
      for (const obj of this.#cache.values()) this.#emit("onUpdate", obj, obj);
    }
  }
}
