import type { Clock } from "../../../../clock/index.ts";
import { nodes, type Kube, type KubeObject } from "../../../../kube/index.ts";

/** Label the machine template puts on every Node of a pool (the OSC Secret's name). */
const poolLabel = "worker.gardener.cloud/gardener-node-agent-secret-name";

/** The pool's Nodes could not be listed: the node waits rather than guess which slots are stale. */
export class PoolListError extends Error {
  override readonly name = "PoolListError";
}

/**
 * Which slot owners' Nodes are gone: only a Node the API server says does not exist when asked by name
 * (a Node missing from the pool's list may still exist: issue 25). By name is a list with
 * `metadata.name=<node>`, since the node-agent authorizer allows a GET only of the own Node. Kept for `ttlMs`.
 */
export class PoolNodes {
  #listed: { readonly pool: string; readonly at: number; readonly names: ReadonlySet<string> } | undefined;
  /** name → when it was asked about, and whether it existed. */
  readonly #asked = new Map<string, { readonly at: number; readonly exists: boolean }>();

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs: number,
  ) {}

  /** The names among `others` whose Node does not exist (a failed question keeps the slot); throws PoolListError. */
  async gone(kube: Kube, pool: string, others: readonly string[], signal: AbortSignal): Promise<ReadonlySet<string>> {
    const out = new Set<string>();
    if (others.length === 0) return out;
    const listed = await this.#list(kube, pool, signal);
    const now = this.clock.now();
    await Promise.all(
      others
        .filter((name) => !listed.has(name))
        .map(async (name) => {
          const known = this.#asked.get(name);
          let exists = known !== undefined && now - known.at < this.ttlMs ? known.exists : undefined;
          if (exists === undefined) {
            try {
              exists = (await kube.list<KubeObject>(nodes, "", { fieldSelector: `metadata.name=${name}`, signal })).items.length > 0;
              this.#asked.set(name, { at: now, exists });
            } catch (err) {
              if (signal.aborted) throw err;
              return; // the slot stays and counts; the next look asks again
            }
          }
          if (!exists) out.add(name);
        }),
    );
    return out;
  }

  async #list(kube: Kube, pool: string, signal: AbortSignal): Promise<ReadonlySet<string>> {
    const now = this.clock.now();
    const c = this.#listed;
    if (c !== undefined && c.pool === pool && now - c.at < this.ttlMs) return c.names;
    let items: readonly KubeObject[];
    try {
      items = (await kube.list<KubeObject>(nodes, "", { labelSelector: `${poolLabel}=${pool}`, signal })).items;
    } catch (err) {
      if (signal.aborted) throw err;
      throw new PoolListError(`cannot list the Nodes labelled ${poolLabel}=${pool}`, { cause: err });
    }
    const names = new Set(items.map((n) => n.metadata.name ?? ""));
    this.#listed = { pool, at: now, names };
    return names;
  }
}
