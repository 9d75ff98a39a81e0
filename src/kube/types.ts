import type { Resource } from "./resources.ts";

/** Minimal object metadata the agent reads and writes (JSON shape: timestamps are strings). */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  [key: string]: unknown;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

export interface KubeList<T extends KubeObject> {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string };
  items: T[];
}

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK";
export interface WatchEvent<T extends KubeObject> {
  type: WatchEventType;
  object: T;
}

export type PatchType = "merge" | "strategic" | "json";

export interface Selectors {
  /** e.g. "metadata.name=foo" */
  fieldSelector?: string;
  /** e.g. "kubernetes.io/hostname=worker-a" */
  labelSelector?: string;
}

export interface RequestOptions {
  signal?: AbortSignal;
}

export interface ListOptions extends Selectors, RequestOptions {
  resourceVersion?: string;
}

export interface WatchOptions extends Selectors, RequestOptions {
  /** Resume point; omitted → the server replays existing objects as ADDED first. */
  resourceVersion?: string;
  allowWatchBookmarks?: boolean;
  timeoutSeconds?: number;
  /**
   * Which `data` values of an event's object arrive as their bytes (a Uint8Array) instead of base64 text:
   * asked only of a value of 1 MiB or more in an event too big to hold whole, which is then decoded while
   * it streams in (issue 27; what the value's text would be, checked as strictly as osc.yaml's).
   */
  dataAsBytes?: DataAsBytes;
  /**
   * Told when an event of 1 MiB or more starts streaming in, before its object is known: what the caller
   * holds of the object's previous version can be let go before the new one is taken beside it (issue 27).
   */
  onBigEvent?: () => void;
}

/** See WatchOptions.dataAsBytes: the object (its metadata present) and the data key. */
export type DataAsBytes = (object: KubeObject, key: string) => boolean;

export interface WriteOptions extends RequestOptions {
  subresource?: string;
}

/**
 * The thin Kubernetes client. Errors are ApiError (with status/reason) or TransportError.
 * `watch` yields events until the server closes the stream (the iterator then ends) or the
 * signal aborts; an ERROR event with a Status object is thrown as ApiError (410 → isGone).
 */
export interface Kube {
  get<T extends KubeObject>(res: Resource, namespace: string, name: string, opts?: RequestOptions): Promise<T>;
  list<T extends KubeObject>(res: Resource, namespace: string, opts?: ListOptions): Promise<KubeList<T>>;
  create<T extends KubeObject>(res: Resource, namespace: string, obj: T, opts?: WriteOptions): Promise<T>;
  /** PUT with the object's resourceVersion; a stale one is a 409 Conflict (isConflict). */
  update<T extends KubeObject>(res: Resource, namespace: string, obj: T, opts?: WriteOptions): Promise<T>;
  patch<T extends KubeObject>(
    res: Resource,
    namespace: string,
    name: string,
    type: PatchType,
    body: unknown,
    opts?: WriteOptions,
  ): Promise<T>;
  delete(res: Resource, namespace: string, name: string, opts?: RequestOptions): Promise<void>;
  watch<T extends KubeObject>(res: Resource, namespace: string, opts?: WatchOptions): AsyncIterable<WatchEvent<T>>;
}
