import type { ClientHttp2Session, IncomingHttpHeaders } from "node:http2";
import { connect as netConnect } from "node:net";

/** gRPC status codes the callers look at (google.golang.org/grpc/codes). */
const grpcCodes = { ok: 0, cancelled: 1, deadlineExceeded: 4, notFound: 5, unavailable: 14 } as const;

/** A call failed with a gRPC status (from the server's trailers) or locally (code 4/14/1). */
export class GrpcError extends Error {
  override readonly name = "GrpcError";
  constructor(
    readonly method: string,
    readonly code: number,
    readonly details: string,
    options?: ErrorOptions,
  ) {
    super(`rpc error: code = ${code} desc = ${details}`, options);
  }
}

export interface UnaryOptions {
  /** Per-call deadline, sent as `grpc-timeout` and enforced locally. */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

/** One HTTP/2 connection speaking unary gRPC (no streaming, no compression). */
export interface GrpcChannel {
  /** `method` is the full path, e.g. `/runtime.v1.RuntimeService/ListPodSandbox`; returns the response message. */
  unary(method: string, request: Uint8Array, opts: UnaryOptions): Promise<Uint8Array>;
  close(): void;
}

const frame = (message: Uint8Array): Uint8Array => {
  const out = new Uint8Array(5 + message.length);
  new DataView(out.buffer).setUint32(1, message.length);
  out.set(message, 5);
  return out;
};

const unframe = (method: string, body: Uint8Array): Uint8Array => {
  if (body.length < 5) throw new GrpcError(method, 13, "response has no message");
  if (body[0] !== 0) throw new GrpcError(method, 13, "compressed responses are not supported");
  const len = new DataView(body.buffer, body.byteOffset, body.byteLength).getUint32(1);
  if (body.length < 5 + len) throw new GrpcError(method, 13, "response message is truncated");
  return body.subarray(5, 5 + len);
};

const header = (h: IncomingHttpHeaders, name: string): string | undefined => {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
};

const statusOf = (method: string, h: IncomingHttpHeaders): GrpcError | "ok" | undefined => {
  const status = header(h, "grpc-status");
  if (status === undefined) return undefined;
  const code = Number(status);
  if (code === 0) return "ok";
  const raw = header(h, "grpc-message") ?? "";
  let details = raw;
  try {
    details = decodeURIComponent(raw);
  } catch (err) {
    // A malformed percent-encoding is shown as sent; the code still says what failed.
    if (!(err instanceof URIError)) throw err;
  }
  return new GrpcError(method, code, details);
};

/**
 * Opens an HTTP/2 connection to a gRPC server on a unix socket (`unix:///run/x.sock` or a path);
 * rejects with code 14 (Unavailable) when it is not up within `timeoutMs`.
 */
export async function dialUnix(endpoint: string, timeoutMs: number, signal?: AbortSignal): Promise<GrpcChannel> {
  const path = endpoint.replace(/^unix:\/\//, "");
  // Loaded here, not at the top: a bundle hoists static node: imports into the agent's start-up, and
  // node:http2 costs every start ~5 ms and ~5 MB although only `reset` speaks gRPC.
  const { connect } = await import("node:http2");
  const session: ClientHttp2Session = connect("http://localhost", { createConnection: () => netConnect(path) });
  await new Promise<void>((resolve, reject) => {
    const fail = (why: string, cause?: unknown) => {
      cleanup();
      session.destroy();
      reject(new GrpcError("dial", grpcCodes.unavailable, `connection to ${endpoint} failed: ${why}`, { cause }));
    };
    const onConnect = () => {
      cleanup();
      resolve();
    };
    const onError = (err: Error) => fail(err.message, err);
    const onAbort = () => fail("cancelled", signal?.reason);
    const timer = setTimeout(() => fail(`no connection within ${timeoutMs} ms`), timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      session.off("connect", onConnect);
      session.off("error", onError);
      signal?.removeEventListener("abort", onAbort);
    };
    session.once("connect", onConnect);
    session.once("error", onError);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
  // Later session errors surface through the streams of the calls in flight.
  session.on("error", () => undefined);
  return {
    unary: (method, request, opts) => unary(session, method, request, opts),
    close: () => session.close(),
  };
}

function unary(session: ClientHttp2Session, method: string, request: Uint8Array, opts: UnaryOptions): Promise<Uint8Array> {
  return new Promise<Uint8Array>((resolve, reject) => {
    const stream = session.request({
      ":method": "POST",
      ":path": method,
      "content-type": "application/grpc",
      te: "trailers",
      "grpc-timeout": `${Math.max(1, Math.ceil(opts.timeoutMs))}m`,
    });
    const chunks: Buffer[] = [];
    let outcome: GrpcError | "ok" | undefined;
    let settled = false;
    const finish = (err?: Error, value?: Uint8Array) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener("abort", onAbort);
      if (err !== undefined) {
        stream.close();
        reject(err);
      } else resolve(value ?? new Uint8Array());
    };
    const timer = setTimeout(
      () => finish(new GrpcError(method, grpcCodes.deadlineExceeded, `context deadline exceeded after ${opts.timeoutMs} ms`)),
      opts.timeoutMs,
    );
    const onAbort = () => finish(new GrpcError(method, grpcCodes.cancelled, "context canceled", { cause: opts.signal?.reason }));
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    if (opts.signal?.aborted === true) onAbort();

    stream.on("response", (h) => {
      const status = Number(header(h, ":status") ?? "0");
      if (status !== 200) outcome = new GrpcError(method, grpcCodes.unavailable, `unexpected HTTP status ${status}`);
      else outcome = statusOf(method, h); // a trailers-only response carries the status here
    });
    stream.on("trailers", (h) => {
      outcome = statusOf(method, h) ?? outcome;
    });
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("error", (err) => finish(new GrpcError(method, grpcCodes.unavailable, err.message, { cause: err })));
    stream.on("close", () => {
      if (outcome instanceof GrpcError) return finish(outcome);
      if (outcome !== "ok") return finish(new GrpcError(method, grpcCodes.unavailable, "stream closed without a grpc-status"));
      try {
        finish(undefined, unframe(method, new Uint8Array(Buffer.concat(chunks))));
      } catch (err) {
        finish(err instanceof Error ? err : new Error(String(err)));
      }
    });
    stream.end(frame(request));
  });
}
