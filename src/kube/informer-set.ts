import type { Clock } from "../clock/index.ts";
import type { Logger } from "../log/index.ts";
import { Informer, type ObjectTransform } from "./informer.ts";
import type { Resource } from "./resources.ts";
import type { Kube, KubeList, KubeObject, Selectors } from "./types.ts";

export interface InformerSetOptions {
  kube: Kube;
  clock: Clock;
  log: Logger;
  /** Passed to every informer (0 = no periodic resync). */
  resyncPeriodMs?: number;
  backoffInitialMs?: number;
  backoffMaxMs?: number;
}

const idOf = (r: Resource, namespace: string, s: Selectors) =>
  `${r.group}/${r.version}/${r.resource}|${namespace}|${s.fieldSelector ?? ""}|${s.labelSelector ?? ""}`;

/**
 * The agent's cache: at most one informer per resource + namespace + selector, shared by every
 * controller that watches it. Informers added after `start` are started at once.
 */
export class InformerSet {
  readonly #o: InformerSetOptions;
  readonly #informers = new Map<string, Informer<KubeObject>>();
  readonly #runs: Promise<void>[] = [];
  #signal: AbortSignal | undefined;

  constructor(opts: InformerSetOptions) {
    this.#o = opts;
  }

  /**
   * `initialList`: a LIST already made for these selectors, used instead of the new informer's first
   * LIST; `transform`: see InformerOptions (both ignored when the informer exists already).
   */
  informerFor<T extends KubeObject>(
    resource: Resource,
    namespace: string,
    selectors: Selectors = {},
    initialList?: KubeList<KubeObject>,
    transform?: ObjectTransform<KubeObject>,
  ): Informer<T> {
    const ns = resource.namespaced ? namespace : "";
    const id = idOf(resource, ns, selectors);
    let inf = this.#informers.get(id);
    if (inf === undefined) {
      inf = new Informer<KubeObject>({
        kube: this.#o.kube,
        clock: this.#o.clock,
        log: this.#o.log,
        resource,
        namespace: ns,
        selectors,
        ...(this.#o.resyncPeriodMs !== undefined ? { resyncPeriodMs: this.#o.resyncPeriodMs } : {}),
        ...(this.#o.backoffInitialMs !== undefined ? { backoffInitialMs: this.#o.backoffInitialMs } : {}),
        ...(this.#o.backoffMaxMs !== undefined ? { backoffMaxMs: this.#o.backoffMaxMs } : {}),
        ...(initialList !== undefined ? { initialList } : {}),
        ...(transform !== undefined ? { transform } : {}),
      });
      this.#informers.set(id, inf);
      if (this.#signal !== undefined) this.#runs.push(inf.run(this.#signal));
    }
    // One informer per id; its element type is whatever the first caller asked for.
    return inf as unknown as Informer<T>;
  }

  /** Start every informer (present and future) until `signal` aborts. */
  start(signal: AbortSignal): void {
    if (this.#signal !== undefined) throw new Error("informer set started twice");
    this.#signal = signal;
    for (const inf of this.#informers.values()) this.#runs.push(inf.run(signal));
  }

  /** Resolves when every informer has stopped (after the start signal aborted). */
  async stopped(): Promise<void> {
    await Promise.all(this.#runs);
  }

  hasSynced(): boolean {
    for (const inf of this.#informers.values()) if (!inf.hasSynced()) return false;
    return true;
  }

  async waitForSync(signal: AbortSignal): Promise<void> {
    await Promise.all([...this.#informers.values()].map((inf) => inf.waitForSync(signal)));
  }

  /** Informers holding `resource` objects of `namespace` (cluster-wide informers match any namespace). */
  informersOf(resource: Resource, namespace: string): Informer<KubeObject>[] {
    return [...this.#informers.values()].filter(
      (inf) =>
        inf.resource.group === resource.group &&
        inf.resource.resource === resource.resource &&
        (inf.namespace === "" || inf.namespace === namespace),
    );
  }
}
