/** The HTTP side of the simulator: authentication, faults, authorization, then the verb on the store. */
import type { RequestInfo } from "./request-info.ts";
import type { AuthnConfig, CertIdentity } from "./authn.ts";
import type { AuthzConfig, RequestAttributes } from "./authz.ts";
import type { Faults } from "./faults.ts";
import type { WatchHub } from "./watch.ts";
import type { UserInfo } from "./user.ts";
import type { RequestRecord } from "./request-log.ts";
import { requestInfo } from "./request-info.ts";
import { authenticate } from "./authn.ts";
import { authorize, forbiddenMessage } from "./authz.ts";
import { forbidden, SimApiError, unauthorized } from "./status.ts";
import { errorResponse, jsonResponse } from "./responses.ts";
import { parseFieldSelector } from "./selectors.ts";
import { serveResource } from "./verbs.ts";

export interface HandlerDeps {
  readonly authn: () => AuthnConfig;
  readonly authz: AuthzConfig;
  readonly faults: Faults;
  readonly hub: WatchHub;
  readonly identityOf: (sourcePort: number) => CertIdentity | undefined;
  readonly record: (r: RequestRecord) => void;
  readonly minRequestTimeoutSec: number;
  readonly version: Record<string, string>;
}

const NON_RESOURCE: Record<string, (d: HandlerDeps) => Response> = {
  "/healthz": () => new Response("ok", { headers: { "content-type": "text/plain; charset=utf-8" } }),
  "/livez": () => new Response("ok", { headers: { "content-type": "text/plain; charset=utf-8" } }),
  "/readyz": () => new Response("ok", { headers: { "content-type": "text/plain; charset=utf-8" } }),
  "/version": (d) => jsonResponse(200, d.version),
  "/api": () =>
    jsonResponse(200, {
      kind: "APIVersions",
      versions: ["v1"],
      serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: "" }],
    }),
  "/apis": () =>
    jsonResponse(200, {
      kind: "APIGroupList",
      apiVersion: "v1",
      groups: ["events.k8s.io", "coordination.k8s.io", "certificates.k8s.io"].map((name) => ({
        name,
        versions: [{ groupVersion: `${name}/v1`, version: "v1" }],
        preferredVersion: { groupVersion: `${name}/v1`, version: "v1" },
      })),
    }),
};

export async function handle(req: Request, sourcePort: number, d: HandlerDeps): Promise<Response> {
  const url = new URL(req.url);
  const info = requestInfo(req.method, url);
  const started = Date.now();
  let user: UserInfo | undefined;
  const record = (code: number, watch = false) =>
    d.record({
      time: started,
      user: user?.name ?? "",
      groups: user?.groups ?? [],
      method: req.method,
      path: url.pathname + url.search,
      verb: info.verb,
      resource: info.resource,
      subresource: info.subresource,
      namespace: info.namespace,
      name: info.name,
      code,
      watch,
      durationMs: Date.now() - started,
    });
  try {
    const authn = authenticate(req.headers.get("authorization"), d.identityOf(sourcePort), d.authn());
    if (!authn.ok) throw unauthorized();
    user = authn.user;
    const target = { verb: info.verb, resource: info.resource, path: url.pathname };
    const delay = d.faults.latencyFor(target);
    if (delay > 0) await Bun.sleep(delay);
    await d.faults.heldUntilReleased(target);
    const hung = await d.faults.hangFor(target, req.signal);
    if (hung !== undefined) throw hung;
    const injected = d.faults.failureFor(target);
    if (injected !== undefined) throw injected;
    const attrs: RequestAttributes = {
      user,
      verb: info.verb,
      isResourceRequest: info.isResourceRequest,
      path: info.path,
      apiGroup: info.apiGroup,
      resource: info.resource,
      subresource: info.subresource,
      namespace: info.namespace,
      name: info.name,
      fieldSelector: info.verb === "list" || info.verb === "watch" ? safeFields(url.searchParams.get("fieldSelector")) : [],
      labelSelector: info.verb === "list" || info.verb === "watch" ? (url.searchParams.get("labelSelector") ?? "") : "",
    };
    const decision = authorize(attrs, d.authz);
    if (!decision.allowed) {
      const gr = { group: info.apiGroup, resource: info.isResourceRequest ? info.resource : "" };
      throw forbidden(gr, info.name, forbiddenMessage(attrs, decision.reason));
    }
    const res = info.isResourceRequest ? await serveResource(req, url, info, user, d) : nonResource(info);
    record(res.status, info.verb === "watch" && res.status === 200);
    return res;
  } catch (err) {
    if (!(err instanceof SimApiError)) throw err;
    record(err.code);
    return errorResponse(err);
  }

  function nonResource(i: RequestInfo): Response {
    const h = NON_RESOURCE[i.path];
    if (h !== undefined && (req.method === "GET" || req.method === "HEAD")) return h(d);
    return new Response("404 page not found\n", { status: 404, headers: { "content-type": "text/plain; charset=utf-8" } });
  }
}

/** Authorization looks at a malformed selector as "no selector"; the verb itself then reports the 400. */
function safeFields(s: string | null) {
  try {
    return parseFieldSelector(s);
  } catch (err) {
    if (err instanceof SimApiError) return [];
    throw err;
  }
}
