import * as v from "valibot";

class KubeHttpError extends Error {
  override readonly name = "KubeHttpError";
  constructor(
    readonly method: string,
    readonly path: string,
    readonly status: number,
    readonly body: string,
  ) {
    super(`${method} ${path}: HTTP ${status} ${body.slice(0, 300)}`);
  }
}

export interface KubeAdminOptions {
  readonly url: string;
  readonly caPem: string;
  readonly token: string;
}

const ObjectMeta = v.object({
  name: v.string(),
  namespace: v.optional(v.string()),
  resourceVersion: v.optional(v.string()),
  uid: v.optional(v.string()),
  labels: v.optional(v.record(v.string(), v.string())),
  annotations: v.optional(v.record(v.string(), v.string())),
});
export const KubeObject = v.looseObject({ metadata: ObjectMeta });
export type KubeObject = v.InferOutput<typeof KubeObject>;
const KubeList = v.looseObject({ items: v.array(KubeObject) });

/** Plain REST calls against the API server with the admin token: what a cluster admin (or gardenlet) would do. */
export class KubeAdmin {
  constructor(private readonly opts: KubeAdminOptions) {}

  async request(method: string, path: string, signal: AbortSignal, body?: unknown, contentType = "application/json"): Promise<unknown> {
    const res = await fetch(new URL(path, this.opts.url), {
      method,
      signal,
      headers: { authorization: `Bearer ${this.opts.token}`, accept: "application/json", "content-type": contentType },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      tls: { ca: this.opts.caPem },
    });
    const text = await res.text();
    if (!res.ok) throw new KubeHttpError(method, path, res.status, text);
    return text === "" ? undefined : (JSON.parse(text) as unknown);
  }

  async get(path: string, signal: AbortSignal): Promise<KubeObject> {
    return v.parse(KubeObject, await this.request("GET", path, signal));
  }

  /** GET that maps 404 to undefined. */
  async find(path: string, signal: AbortSignal): Promise<KubeObject | undefined> {
    try {
      return await this.get(path, signal);
    } catch (err) {
      if (err instanceof KubeHttpError && err.status === 404) return undefined;
      throw err;
    }
  }

  async list(path: string, signal: AbortSignal): Promise<KubeObject[]> {
    return v.parse(KubeList, await this.request("GET", path, signal)).items;
  }

  async create(collectionPath: string, obj: unknown, signal: AbortSignal): Promise<KubeObject> {
    return v.parse(KubeObject, await this.request("POST", collectionPath, signal, obj));
  }

  async mergePatch(path: string, patch: unknown, signal: AbortSignal): Promise<KubeObject> {
    return v.parse(KubeObject, await this.request("PATCH", path, signal, patch, "application/merge-patch+json"));
  }

  /** Creates the object, or replaces it (PUT with the current resourceVersion) when it exists. */
  async apply(collectionPath: string, obj: KubeObject, signal: AbortSignal): Promise<KubeObject> {
    const path = `${collectionPath}/${obj.metadata.name}`;
    const current = await this.find(path, signal);
    if (current === undefined) return this.create(collectionPath, obj, signal);
    const body = { ...obj, metadata: { ...obj.metadata, resourceVersion: current.metadata.resourceVersion } };
    return v.parse(KubeObject, await this.request("PUT", path, signal, body));
  }
}
