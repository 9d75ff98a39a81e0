/** Receives the four kinds of events a source produces (what a controller's watch plugs into). */
export interface EventSink<T> {
  create(obj: T): void;
  update(oldObj: T, newObj: T): void;
  delete(obj: T): void;
  generic(obj: T): void;
}

/** Anything that can deliver events to sinks: an informer, or an in-process channel. */
export interface Source<T> {
  /** Start delivering to `sink`; the returned function stops it. */
  subscribe(sink: EventSink<T>): () => void;
}

/**
 * In-process generic events (controller-runtime source.Channel over a buffered Go channel): e.g.
 * the OSC controller tells the token controller to re-sync a secret. Events sent while nobody is
 * subscribed are buffered (up to `capacity`, oldest dropped first — the sender never blocks) and
 * delivered to the first subscriber.
 */
export class Channel<T> implements Source<T> {
  readonly #sinks = new Set<EventSink<T>>();
  readonly #buffer: T[] = [];

  constructor(readonly capacity = 100) {}

  send(obj: T): void {
    if (this.#sinks.size === 0) {
      this.#buffer.push(obj);
      if (this.#buffer.length > this.capacity) this.#buffer.shift();
      return;
    }
    for (const s of this.#sinks) s.generic(obj);
  }

  subscribe(sink: EventSink<T>): () => void {
    this.#sinks.add(sink);
    for (const obj of this.#buffer.splice(0)) sink.generic(obj);
    return () => {
      this.#sinks.delete(sink);
    };
  }

  get subscribers(): number {
    return this.#sinks.size;
  }
}
