import { type HealthChecks, reportBody } from "./health.ts";
import type { MetricsRegistry } from "./metrics.ts";

export interface Endpoint {
  /** "" = all interfaces (Go's ":2751"); "[::1]" or "::1" for IPv6. */
  readonly bindAddress: string;
  /** 0 picks a free port (tests). */
  readonly port: number;
}

export interface RunningServer {
  /** The port actually bound. */
  readonly port: number;
  readonly hostname: string;
  /** Stops accepting and closes open connections. */
  stop(): Promise<void>;
}

export class ListenError extends Error {
  override readonly name = "ListenError";
  constructor(
    readonly address: string,
    options?: ErrorOptions,
  ) {
    super(`failed to listen on ${address}`, options);
  }
}

const hostnameOf = (bindAddress: string): string => (bindAddress === "" ? "0.0.0.0" : bindAddress.replace(/^\[(.*)\]$/, "$1"));

const listen = (e: Endpoint, fetch: (req: Request) => Response | Promise<Response>): RunningServer => {
  const hostname = hostnameOf(e.bindAddress);
  let server: ReturnType<typeof Bun.serve>;
  try {
    server = Bun.serve({ hostname, port: e.port, fetch, idleTimeout: 30 });
  } catch (err) {
    throw new ListenError(`${e.bindAddress}:${e.port}`, { cause: err });
  }
  return {
    port: server.port ?? e.port,
    hostname,
    stop: () => server.stop(true),
  };
};

/** Routes served before a server's own; undefined for a path they do not own. */
type ExtraRoutes = (req: Request) => Promise<Response | undefined>;

const text = (body: string, status = 200, contentType = "text/plain; charset=utf-8") =>
  new Response(body, { status, headers: { "content-type": contentType, "x-content-type-options": "nosniff" } });

/**
 * `/healthz`, `/readyz` (and `/healthz/<check>`, `/readyz/<check>`); `?verbose` lists every check.
 * `extra` serves further routes first, as on the metrics server.
 */
export const startHealthServer = (e: Endpoint, checks: HealthChecks, extra?: ExtraRoutes): RunningServer =>
  listen(e, async (req) => {
    const handled = extra === undefined ? undefined : await extra(req);
    if (handled !== undefined) return handled;
    const url = new URL(req.url);
    const m = /^\/(healthz|readyz)(?:\/([^/]+))?\/?$/.exec(url.pathname);
    if (m === null) return text("404 page not found\n", 404);
    const kind = m[1] === "healthz" ? "healthz" : "readyz";
    const report = await checks.run(kind, m[2]);
    if (report === undefined) return text("404 page not found\n", 404);
    return text(reportBody(kind, report, url.searchParams.has("verbose")), report.ok ? 200 : 500);
  });

/**
 * `/metrics` in Prometheus text format 0.0.4; `extra` serves further routes first (the profiles
 * when `debugging.enableProfiling` is set) and returns undefined for paths it does not own.
 */
export const startMetricsServer = (e: Endpoint, registry: MetricsRegistry, extra?: ExtraRoutes): RunningServer =>
  listen(e, async (req) => {
    const handled = extra === undefined ? undefined : await extra(req);
    if (handled !== undefined) return handled;
    if (new URL(req.url).pathname !== "/metrics") return text("404 page not found\n", 404);
    return text(await registry.render(), 200, "text/plain; version=0.0.4; charset=utf-8");
  });
