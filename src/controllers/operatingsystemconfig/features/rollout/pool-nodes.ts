import type { Clock } from "../../../../clock/index.ts";
import { nodes, type Kube, type KubeObject } from "../../../../kube/index.ts";

/** Label the machine template puts on every Node of a pool (the OSC Secret's name). */
const poolLabel = "worker.gardener.cloud/gardener-node-agent-secret-name";

/**
 * Names of the pool's Nodes, listed by the pool label and kept for `ttlMs`: slots of Nodes that no
 * longer exist are dropped by the next writer, and a waiting node need not list the pool on every look.
 */
export class PoolNodes {
  #cached: { readonly pool: string; readonly at: number; readonly names: ReadonlySet<string> } | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs: number,
  ) {}

  async names(kube: Kube, pool: string, signal: AbortSignal): Promise<ReadonlySet<string>> {
    const now = this.clock.now();
    const c = this.#cached;
    if (c !== undefined && c.pool === pool && now - c.at < this.ttlMs) return c.names;
    const list = await kube.list<KubeObject>(nodes, "", { labelSelector: `${poolLabel}=${pool}`, signal });
    const names = new Set(list.items.map((n) => n.metadata.name ?? ""));
    this.#cached = { pool, at: now, names };
    return names;
  }
}
