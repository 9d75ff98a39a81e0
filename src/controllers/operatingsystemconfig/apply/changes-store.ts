import type { OscChanges } from "../../../osc/index.ts";

/** Writes the whole change set to disk (atomically); injected so tests and gardenadm mode can differ. */
export type PersistChanges = (changes: OscChanges) => Promise<void>;

/** Mutations written together, and that write. */
interface JoinedUpdates {
  readonly mutations: ((c: OscChanges) => void)[];
  readonly written: Promise<void>;
}

/** The pending work list plus §5.6 bookkeeping, serialised by a queue (unit commands complete concurrently). */
export class ChangesStore {
  private chain: Promise<void> = Promise.resolve();
  /** Completions recorded in memory that no write has carried to disk yet (see `defer`). */
  private deferred = false;
  /** Durability the deferred completions wait for; once it failed every later write fails (it would claim undurable work). */
  private durable: Promise<void> = Promise.resolve();
  /** The update queued behind the write under way, which later updates join (see `update`). */
  private waiting: JoinedUpdates | undefined;

  constructor(
    readonly changes: OscChanges,
    private readonly persistFn: PersistChanges,
  ) {}

  /**
   * Applies `mutate` and persists, after every earlier update has been written. Updates that arrive while
   * one waits its turn join it: one write carries them all (the last of their writes would hold the same
   * document). Ten concurrent unit commands of a 1000-file apply were ten encodes of the whole record.
   */
  update(mutate: (c: OscChanges) => void): Promise<void> {
    const waiting = this.waiting;
    if (waiting !== undefined) {
      waiting.mutations.push(mutate);
      return waiting.written;
    }
    const mutations = [mutate];
    const written = this.enqueue(
      (c) => {
        for (const m of mutations) m(c);
        return this.persistFn(c);
      },
      () => {
        if (this.waiting?.mutations === mutations) this.waiting = undefined; // its turn: later updates queue anew
      },
    );
    this.waiting = { mutations, written };
    return written;
  }

  persist(): Promise<void> {
    return this.update(() => undefined);
  }

  /**
   * Persists the change set through `write` instead of the store's writer, e.g. as one member of a
   * file group (state.ts `changesFileWrite`). `write` runs in the store's queue, so it must not wait
   * for another update of this store (deferring completions is fine).
   */
  persistVia(write: (c: OscChanges) => Promise<void>): Promise<void> {
    // An update queued after this write is not written before it.
    this.waiting = undefined;
    return this.enqueue(write);
  }

  /** Runs `write` after every earlier one; `started` is told when its turn comes (before durability is awaited). */
  private enqueue(write: (c: OscChanges) => Promise<void>, started?: () => void): Promise<void> {
    const next = this.chain.then(async () => {
      started?.();
      await this.durable;
      this.deferred = false;
      return write(this.changes);
    });
    // A failed write fails this caller; later updates still run (and rewrite the whole file).
    this.chain = next.catch(() => undefined);
    return next;
  }

  /**
   * Records work harmless to redo without writing the file: the next update (or `flush`) carries it; a
   * crash before that redoes it on resume. `durable`: no write carries it before the work is durable.
   */
  defer(mutate: (c: OscChanges) => void, durable?: Promise<void>): void {
    mutate(this.changes);
    this.deferred = true;
    if (durable !== undefined) {
      const before = this.durable;
      this.durable = Promise.all([before, durable]).then(() => undefined);
      this.durable.catch(() => undefined); // surfaces through the next write
    }
  }

  /** Writes deferred completions, if any. */
  flush(): Promise<void> {
    return this.deferred ? this.persist() : this.chain;
  }

  fileChangedDone(path: string): Promise<void> {
    return this.update((c) => removeFirst(c.files.changed, (f) => f.path === path));
  }

  /** A group of files written together is recorded with one write of the changes file (or deferred, see `defer`). */
  filesChangedDone(paths: readonly string[], opts: { readonly deferred?: boolean; readonly durable?: Promise<void> } = {}): Promise<void> {
    const done = new Set(paths);
    const mutate = (c: OscChanges) => {
      c.files.changed = c.files.changed.filter((f) => !done.has(f.path));
    };
    if (opts.deferred !== true) return (opts.durable ?? Promise.resolve()).then(() => this.update(mutate));
    this.defer(mutate, opts.durable);
    return Promise.resolve();
  }

  filesDeletedDone(paths: readonly string[]): Promise<void> {
    const done = new Set(paths);
    return this.update((c) => {
      c.files.deleted = c.files.deleted.filter((f) => !done.has(f.path));
    });
  }

  registryDesiredDone(upstream: string): Promise<void> {
    return this.update((c) => {
      removeFirst(c.containerd.registries.desired, (r) => r.upstream === upstream);
      removeFirst(c.containerd.registries.upstreamsToProbe, (u) => u === upstream);
    });
  }

  registryDeletedDone(upstream: string): Promise<void> {
    return this.update((c) => removeFirst(c.containerd.registries.deleted, (r) => r.upstream === upstream));
  }

  /** Units whose files and enablement were handled together (all idempotent steps), recorded with one write (or deferred). */
  unitsChangedDone(names: readonly string[], opts: { readonly deferred?: boolean } = {}): Promise<void> {
    const done = new Set(names);
    const mutate = (c: OscChanges) => {
      c.units.changed = c.units.changed.filter((u) => !done.has(u.name));
    };
    if (opts.deferred !== true) return this.update(mutate);
    this.defer(mutate);
    return Promise.resolve();
  }

  unitDeletedDone(name: string): Promise<void> {
    return this.update((c) => removeFirst(c.units.deleted, (u) => u.name === name));
  }

  unitCommandDone(name: string): Promise<void> {
    return this.update((c) => removeFirst(c.units.commands, (u) => u.name === name));
  }

  containerdRestarted(): Promise<void> {
    return this.update((c) => {
      c.containerd.configFileChanged = false;
    });
  }

  setMustRestartNodeAgent(value: boolean): Promise<void> {
    return this.update((c) => {
      c.mustRestartNodeAgent = value;
    });
  }
}

function removeFirst<T>(list: T[], match: (x: T) => boolean): void {
  const i = list.findIndex(match);
  if (i >= 0) list.splice(i, 1);
}
