/**
 * The plain HTTP server behind the TLS front. It is node:http rather than Bun.serve because a watch must send
 * its response head before the first event, and Bun.serve holds the head back until the body yields data.
 */
import http from "node:http";

export type FetchHandler = (req: Request, sourcePort: number) => Promise<Response>;

export interface InnerServer {
  readonly port: number;
  close(): Promise<void>;
}

/** `clientGone` aborts the Request's signal when the client hangs up before the answer is sent. */
function toRequest(req: http.IncomingMessage, body: Buffer, clientGone: AbortSignal): Request {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined) continue;
    for (const x of Array.isArray(v) ? v : [v]) headers.append(k, x);
  }
  const method = req.method ?? "GET";
  const init: RequestInit = { method, headers, signal: clientGone };
  if (method !== "GET" && method !== "HEAD") init.body = body;
  return new Request(`http://127.0.0.1${req.url ?? "/"}`, init);
}

async function send(res: http.ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((v, k) => {
    headers[k] = v;
  });
  const streaming = headers["transfer-encoding"] === "chunked";
  if (!streaming || response.body === null) {
    const buf = Buffer.from(await response.arrayBuffer());
    headers["content-length"] = String(buf.length);
    res.writeHead(response.status, headers);
    res.end(buf);
    return;
  }
  res.writeHead(response.status, headers);
  res.flushHeaders();
  const reader = response.body.getReader();
  res.on("close", () => void reader.cancel().catch(() => undefined));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      res.write(value);
    }
    res.end();
  } catch {
    // the stream was errored on purpose (dropped watch): cut the connection instead of ending cleanly
    res.destroy();
  }
}

export function startInnerServer(handler: FetchHandler): Promise<InnerServer> {
  const srv = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    const clientGone = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) clientGone.abort();
    });
    req.on("end", () => {
      handler(toRequest(req, Buffer.concat(chunks), clientGone.signal), req.socket.remotePort ?? 0)
        .then((response) => send(res, response))
        .catch((err: unknown) => {
          res.writeHead(500, { "content-type": "text/plain" });
          res.end(`simulator bug: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
        });
    });
  });
  srv.keepAliveTimeout = 120_000;
  srv.requestTimeout = 0;
  srv.timeout = 0;
  return new Promise((resolve, reject) => {
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = addr !== null && typeof addr === "object" ? addr.port : 0;
      resolve({
        port,
        close: () =>
          new Promise<void>((r) => {
            srv.closeAllConnections();
            srv.close(() => r());
          }),
      });
    });
  });
}
