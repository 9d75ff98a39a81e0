/** A tiny HTTPS client for tests that talk to the simulator directly (not the product's kube client). */

export interface Credentials {
  token?: string;
  cert?: { certPem: string; keyPem: string };
}

export interface CallOptions extends Credentials {
  body?: unknown;
  contentType?: string;
  signal?: AbortSignal;
}

export interface CallResult {
  status: number;
  headers: Headers;
  body: unknown;
}

export class SimClient {
  constructor(
    readonly url: string,
    readonly caPem: string,
    readonly creds: Credentials = {},
  ) {}

  with(creds: Credentials): SimClient {
    return new SimClient(this.url, this.caPem, creds);
  }

  private init(method: string, o: CallOptions): BunFetchRequestInit {
    const token = o.token ?? this.creds.token;
    const cert = o.cert ?? this.creds.cert;
    const headers: Record<string, string> = {};
    if (token !== undefined) headers["authorization"] = `Bearer ${token}`;
    const init: BunFetchRequestInit = {
      method,
      headers,
      tls: cert === undefined ? { ca: this.caPem } : { ca: this.caPem, cert: cert.certPem, key: cert.keyPem },
    };
    if (o.body !== undefined) {
      headers["content-type"] = o.contentType ?? "application/json";
      init.body = typeof o.body === "string" ? o.body : JSON.stringify(o.body);
    }
    if (o.signal !== undefined) init.signal = o.signal;
    return init;
  }

  async call(method: string, path: string, o: CallOptions = {}): Promise<CallResult> {
    const res = await fetch(`${this.url}${path}`, this.init(method, o));
    const text = await res.text();
    let body: unknown = text;
    if ((res.headers.get("content-type") ?? "").includes("json") && text !== "") body = JSON.parse(text);
    return { status: res.status, headers: res.headers, body };
  }

  /** Opens a watch; `next()` yields parsed events, `close()` aborts. Non-200 answers are returned as `status`. */
  async watch(path: string, o: CallOptions = {}): Promise<WatchStream> {
    const ac = new AbortController();
    const signal = o.signal === undefined ? ac.signal : AbortSignal.any([ac.signal, o.signal]);
    const res = await fetch(`${this.url}${path}`, this.init("GET", { ...o, signal }));
    return new WatchStream(res, ac);
  }
}

type ReadResult = Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>["read"]>>;

export interface WatchEventJson {
  type: string;
  object: Record<string, unknown> & { metadata: Record<string, unknown> };
}

class WatchEndedError extends Error {
  override readonly name = "WatchEndedError";
}

export class WatchStream {
  private buf = "";
  private readonly reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  private readonly dec = new TextDecoder();
  /** A read that outlived a deadline is kept, so its data is not lost. */
  private pending: Promise<ReadResult> | undefined;
  ended = false;
  /** The stream ended with a transport error (connection reset) rather than a clean end. */
  broken = false;

  constructor(
    readonly response: Response,
    private readonly ac: AbortController,
  ) {
    this.reader = response.status === 200 ? (response.body?.getReader() as ReadableStreamDefaultReader<Uint8Array> | undefined) : undefined;
  }

  get status(): number {
    return this.response.status;
  }

  /** The next event; throws WatchEndedError when the server ended the stream, or the deadline passed. */
  async next(timeoutMs = 5000): Promise<WatchEventJson> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const nl = this.buf.indexOf("\n");
      if (nl >= 0) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        if (line.trim() !== "") return JSON.parse(line) as WatchEventJson;
        continue;
      }
      if (this.reader === undefined || this.ended) throw new WatchEndedError("watch stream ended");
      const left = deadline - Date.now();
      if (left <= 0) throw new WatchEndedError(`no watch event within ${timeoutMs} ms`);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<"timeout">((r) => (timer = setTimeout(() => r("timeout"), left)));
      this.pending ??= this.reader.read();
      let r: ReadResult | "timeout";
      try {
        r = await Promise.race([this.pending, timeout]);
      } catch (err) {
        // a reset connection ends the stream as far as the watcher is concerned
        this.pending = undefined;
        this.ended = true;
        this.broken = true;
        throw new WatchEndedError("watch stream broke", { cause: err });
      } finally {
        clearTimeout(timer);
      }
      if (r === "timeout") throw new WatchEndedError(`no watch event within ${timeoutMs} ms`);
      this.pending = undefined;
      if (r.done) this.ended = true;
      else this.buf += this.dec.decode(r.value, { stream: true });
    }
  }

  /** Resolves true when the server ends the stream (events before the end are discarded). */
  async waitEnd(timeoutMs = 5000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        await this.next(Math.max(1, deadline - Date.now()));
      } catch (err) {
        if (err instanceof WatchEndedError) return this.ended;
        throw err;
      }
    }
  }

  close(): void {
    this.ac.abort();
  }
}
