import * as v from "valibot";
import { realClock, type Clock } from "../clock/index.ts";
import { version } from "../version/index.ts";
import { authSourceFor, bunReadTextFile, bunStatFile, type AuthSource, type ReadTextFile, type StatFile } from "./credentials.ts";
import { TransportError } from "./errors.ts";
import type { RestConfig } from "./kubeconfig.ts";
import { TokenBucket } from "./rate-limiter.ts";
import { apiVersionOf, resourcePath, type Resource } from "./resources.ts";
import { apiErrorFrom, parseBody, retryAfterHeader } from "./status.ts";
import type {
  Kube,
  KubeList,
  KubeObject,
  ListOptions,
  PatchType,
  RequestOptions,
  WatchEvent,
  WatchOptions,
  WriteOptions,
} from "./types.ts";
import { watchStream } from "./watch.ts";
import { errorText } from "../log/index.ts";

export interface KubeClientOptions {
  config: RestConfig;
  /** Client-side rate limit. client-go defaults (5/10) apply to `credentials/kubeconfig`; the wiring passes clientConnection's values for the other paths. */
  qps?: number;
  burst?: number;
  /** Deadline of one non-watch request (headers and body), default 30 s. */
  timeoutMs?: number;
  userAgent?: string;
  clock?: Clock;
  readFile?: ReadTextFile;
  statFile?: StatFile;
}

const goArch: Readonly<Record<string, string>> = { x64: "amd64", arm64: "arm64", ia32: "386", arm: "arm" };

/** `gardener-node-agent/<version> (linux/<arch>)`, like client-go's default user agent. */
export function defaultUserAgent(): string {
  return `gardener-node-agent/${version} (linux/${goArch[process.arch] ?? process.arch})`;
}

const objectSchema = v.looseObject({ metadata: v.looseObject({}) });
const listSchema = v.looseObject({
  metadata: v.optional(v.looseObject({ resourceVersion: v.optional(v.string()), continue: v.optional(v.string()) }), {}),
  items: v.nullish(v.array(objectSchema), []),
});

const patchContentType: Readonly<Record<PatchType, string>> = {
  merge: "application/merge-patch+json",
  strategic: "application/strategic-merge-patch+json",
  json: "application/json-patch+json",
};

interface HttpRequest {
  method: string;
  path: string;
  query?: URLSearchParams;
  body?: unknown;
  contentType?: string;
  signal?: AbortSignal | undefined;
}

/**
 * The Kube port over Bun's fetch: JSON only (clientConnection.contentType asks for protobuf; the
 * API server serves JSON to clients that accept only JSON, so it is deliberately ignored), TLS
 * verification always on, one keep-alive pool per client, a token bucket in front of every request.
 */
export class KubeClient implements Kube {
  readonly #config: RestConfig;
  readonly #session: Bun.FetchSession;
  readonly #auth: AuthSource;
  readonly #bucket: TokenBucket;
  readonly #timeoutMs: number;
  readonly #userAgent: string;
  readonly #tls: BunFetchRequestInitTLS;

  constructor(opts: KubeClientOptions) {
    const cfg = opts.config;
    this.#config = cfg;
    this.#tls = {
      rejectUnauthorized: true,
      ...(cfg.caPem !== undefined ? { ca: cfg.caPem } : {}),
      ...(cfg.clientCertPem !== undefined ? { cert: cfg.clientCertPem } : {}),
      ...(cfg.clientKeyPem !== undefined ? { key: cfg.clientKeyPem } : {}),
      ...(cfg.tlsServerName !== undefined ? { serverName: cfg.tlsServerName } : {}),
    };
    this.#session = new Bun.FetchSession({ tls: this.#tls });
    this.#auth = authSourceFor(cfg.credentials, opts.readFile ?? bunReadTextFile, opts.statFile ?? bunStatFile);
    this.#bucket = new TokenBucket(opts.qps ?? 5, opts.burst ?? 10, opts.clock ?? realClock);
    this.#timeoutMs = opts.timeoutMs ?? 30_000;
    this.#userAgent = opts.userAgent ?? defaultUserAgent();
  }

  get server(): string {
    return this.#config.server;
  }

  /** Close idle pooled connections (in-flight requests finish). */
  close(): void {
    this.#session.close();
  }

  async get<T extends KubeObject>(res: Resource, namespace: string, name: string, opts?: RequestOptions): Promise<T> {
    const body = await this.#json({ method: "GET", path: resourcePath(res, namespace, name), signal: opts?.signal });
    return narrowObject<T>(body, `GET ${res.resource}/${name}`);
  }

  async list<T extends KubeObject>(res: Resource, namespace: string, opts?: ListOptions): Promise<KubeList<T>> {
    const query = new URLSearchParams();
    if (opts?.fieldSelector) query.set("fieldSelector", opts.fieldSelector);
    if (opts?.labelSelector) query.set("labelSelector", opts.labelSelector);
    if (opts?.resourceVersion !== undefined) query.set("resourceVersion", opts.resourceVersion);
    const body = await this.#json({ method: "GET", path: resourcePath(res, namespace), query, signal: opts?.signal });
    const parsed = v.safeParse(listSchema, body);
    if (!parsed.success) throw new TransportError(`LIST ${res.resource}: response is not a list`);
    // Shape checked above; the element type is the caller's claim (it validates what it reads).
    return parsed.output as unknown as KubeList<T>;
  }

  async create<T extends KubeObject>(res: Resource, namespace: string, obj: T, opts?: WriteOptions): Promise<T> {
    const body = await this.#json({
      method: "POST",
      path: resourcePath(res, namespace, opts?.subresource !== undefined ? obj.metadata.name : undefined, opts?.subresource),
      body: withTypeMeta(res, obj),
      contentType: "application/json",
      signal: opts?.signal,
    });
    return narrowObject<T>(body, `POST ${res.resource}`);
  }

  async update<T extends KubeObject>(res: Resource, namespace: string, obj: T, opts?: WriteOptions): Promise<T> {
    const name = obj.metadata.name;
    if (name === undefined || name === "") throw new TypeError(`update ${res.resource}: metadata.name is required`);
    const body = await this.#json({
      method: "PUT",
      path: resourcePath(res, namespace, name, opts?.subresource),
      body: withTypeMeta(res, obj),
      contentType: "application/json",
      signal: opts?.signal,
    });
    return narrowObject<T>(body, `PUT ${res.resource}/${name}`);
  }

  async patch<T extends KubeObject>(
    res: Resource,
    namespace: string,
    name: string,
    type: PatchType,
    patchBody: unknown,
    opts?: WriteOptions,
  ): Promise<T> {
    const body = await this.#json({
      method: "PATCH",
      path: resourcePath(res, namespace, name, opts?.subresource),
      body: patchBody,
      contentType: patchContentType[type],
      signal: opts?.signal,
    });
    return narrowObject<T>(body, `PATCH ${res.resource}/${name}`);
  }

  async delete(res: Resource, namespace: string, name: string, opts?: RequestOptions): Promise<void> {
    await this.#json({ method: "DELETE", path: resourcePath(res, namespace, name), signal: opts?.signal });
  }

  watch<T extends KubeObject>(res: Resource, namespace: string, opts: WatchOptions = {}): AsyncIterable<WatchEvent<T>> {
    return watchStream<T>(res, namespace, opts, {
      baseUrl: this.#config.server,
      headers: (signal) => this.#headers(undefined, signal),
      fetch: this.#session.fetch,
      headerTimeoutMs: this.#timeoutMs,
    });
  }

  async #headers(contentType: string | undefined, signal: AbortSignal | undefined): Promise<Record<string, string>> {
    await this.#bucket.wait(signal);
    const h: Record<string, string> = { Accept: "application/json", "User-Agent": this.#userAgent };
    const auth = await this.#auth.header();
    if (auth !== undefined) h["Authorization"] = auth;
    if (contentType !== undefined) h["Content-Type"] = contentType;
    return h;
  }

  async #json(req: HttpRequest): Promise<unknown> {
    const headers = await this.#headers(req.contentType, req.signal);
    const url = `${this.#config.server}${req.path}${req.query !== undefined && req.query.size > 0 ? `?${req.query}` : ""}`;
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    const signal = req.signal !== undefined ? AbortSignal.any([req.signal, timeout]) : timeout;
    let status: number;
    let text: string;
    let retryAfter: number | undefined;
    try {
      const resp = await this.#session.fetch(url, {
        method: req.method,
        headers,
        signal,
        ...(req.body !== undefined ? { body: JSON.stringify(req.body) } : {}),
      });
      status = resp.status;
      retryAfter = retryAfterHeader(resp.headers.get("retry-after"));
      text = await resp.text();
    } catch (err) {
      if (req.signal?.aborted) throw req.signal.reason;
      if (timeout.aborted) {
        throw new TransportError(`${req.method} ${req.path}: timed out after ${this.#timeoutMs}ms`, { cause: err });
      }
      throw new TransportError(`${req.method} ${req.path}: ${errorText(err)}`, {
        cause: err,
      });
    }
    const body = parseBody(text);
    if (status < 200 || status > 299) throw apiErrorFrom(status, body, retryAfter);
    return body;
  }
}

function narrowObject<T extends KubeObject>(body: unknown, what: string): T {
  const parsed = v.safeParse(objectSchema, body);
  if (!parsed.success) throw new TransportError(`${what}: response is not a Kubernetes object`);
  // Only the envelope is checked here; callers validate the fields they read.
  return parsed.output as unknown as T;
}

/** apiVersion/kind are required on writes; fill them from the resource when the caller left them out. */
function withTypeMeta<T extends KubeObject>(res: Resource, obj: T): T {
  return { ...obj, apiVersion: obj.apiVersion ?? apiVersionOf(res), kind: obj.kind ?? res.kind };
}
