import { ApiError } from "./errors.ts";
import type { InformerSet } from "./informer-set.ts";
import { keyString } from "./reconcile.ts";
import type { Resource } from "./resources.ts";
import type { Kube, KubeList, KubeObject, RequestOptions } from "./types.ts";

/**
 * Read access by key. Two named implementations exist so every read says where it comes from:
 * `CachedReader` (informer caches, no API request) and `liveReader` (a GET against the API server,
 * upstream's APIReader — e.g. token secrets, which have no informer).
 */
export interface Reader {
  /** Missing objects are an ApiError 404 (isNotFound), the same for both readers. */
  get<T extends KubeObject>(res: Resource, namespace: string, name: string, opts?: RequestOptions): Promise<T>;
  list<T extends KubeObject>(res: Resource, namespace: string, opts?: RequestOptions): Promise<KubeList<T>>;
}

export function liveReader(kube: Kube): Reader {
  return {
    get: (res, namespace, name, opts) => kube.get(res, namespace, name, opts),
    list: (res, namespace, opts) => kube.list(res, namespace, opts),
  };
}

/** Thrown when code reads a resource through the cache that no informer watches (a wiring bug). */
export class NotCachedError extends Error {
  override readonly name = "NotCachedError";
}

export class CachedReader implements Reader {
  constructor(private readonly informers: InformerSet) {}

  /** Waits for the matching caches to sync first (like controller-runtime's cache reader). */
  async get<T extends KubeObject>(res: Resource, namespace: string, name: string, opts?: RequestOptions): Promise<T> {
    const ns = res.namespaced ? namespace : "";
    const infs = await this.#synced(res, ns, opts?.signal);
    const key = keyString({ namespace: ns, name });
    for (const inf of infs) {
      const obj = inf.get(key);
      // Same resource, so the cached element type is the caller's T.
      if (obj !== undefined) return obj as T;
    }
    throw new ApiError(404, "NotFound", `${res.resource} "${name}" not found`);
  }

  async list<T extends KubeObject>(res: Resource, namespace: string, opts?: RequestOptions): Promise<KubeList<T>> {
    const ns = res.namespaced ? namespace : "";
    const seen = new Map<string, KubeObject>();
    for (const inf of await this.#synced(res, ns, opts?.signal)) {
      for (const obj of inf.list()) {
        if (ns === "" || obj.metadata.namespace === ns) {
          seen.set(keyString({ namespace: obj.metadata.namespace ?? "", name: obj.metadata.name ?? "" }), obj);
        }
      }
    }
    return { metadata: {}, items: [...seen.values()] as T[] };
  }

  async #synced(res: Resource, ns: string, signal: AbortSignal | undefined) {
    const infs = this.informers.informersOf(res, ns);
    if (infs.length === 0) throw new NotCachedError(`no informer caches ${res.resource} in namespace "${ns}"`);
    const waitOn = signal ?? new AbortController().signal;
    for (const inf of infs) if (!inf.hasSynced()) await inf.waitForSync(waitOn);
    return infs;
  }
}
