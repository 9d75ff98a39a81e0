/**
 * The test API over plain HTTP on 127.0.0.1, for shell scripts and VM end-to-end runs that cannot call the
 * simulator's methods directly. Routes are listed in README.md.
 */
import * as v from "valibot";
import type { ApiServerSim } from "./server.ts";
import type { PatchKind } from "./store.ts";
import { SimApiError } from "./status.ts";
import { CsrNotReadyError } from "./csr.ts";
import { WaitTimeoutError } from "./wait.ts";

const Match = { verb: v.optional(v.string()), resource: v.optional(v.string()), path: v.optional(v.string()) };
const schemas = {
  token: v.object({ token: v.string(), user: v.string(), groups: v.optional(v.array(v.string()), []), uid: v.optional(v.string()) }),
  bootstrap: v.object({
    id: v.string(),
    secret: v.string(),
    expiration: v.optional(v.string()),
    extraGroups: v.optional(v.array(v.string())),
  }),
  cert: v.object({ cn: v.string(), orgs: v.optional(v.array(v.string()), []), expirationSeconds: v.optional(v.number()) }),
  machine: v.object({ machine: v.string(), node: v.string() }),
  secret: v.object({ machine: v.string(), secret: v.string() }),
  fail: v.object({ count: v.optional(v.number(), 1), status: v.optional(v.number()), retryAfterSeconds: v.optional(v.number()), ...Match }),
  hang: v.object({ count: v.optional(v.number(), 1), ms: v.optional(v.number()), ...Match }),
  latency: v.object({ ms: v.number(), ...Match }),
  drop: v.object({ abrupt: v.optional(v.boolean(), false) }),
  stall: v.object({ ms: v.number() }),
  refuse: v.object({ ms: v.optional(v.number()) }),
  wait: v.object({
    resource: v.string(),
    namespace: v.optional(v.string(), ""),
    name: v.string(),
    timeoutMs: v.optional(v.number(), 30_000),
    exists: v.optional(v.boolean(), true),
    field: v.optional(v.string()),
    equals: v.optional(v.unknown()),
  }),
  kubeconfig: v.object({
    token: v.optional(v.string()),
    tokenFile: v.optional(v.string()),
    clientCert: v.optional(v.object({ certPem: v.string(), keyPem: v.string() })),
    server: v.optional(v.string()),
    caPath: v.optional(v.string()),
  }),
};

class ControlError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function parse<T extends v.GenericSchema>(schema: T, body: unknown): v.InferOutput<T> {
  const r = v.safeParse(schema, body);
  if (!r.success) throw new ControlError(400, r.issues.map((i) => `${v.getDotPath(i) ?? ""}: ${i.message}`).join("; "));
  return r.output;
}

function pick<T extends object>(o: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, x]) => x !== undefined)) as { [K in keyof T]: Exclude<T[K], undefined> };
}

function fieldAt(o: unknown, path: string): unknown {
  return path
    .split(".")
    .reduce<unknown>((cur, k) => (typeof cur === "object" && cur !== null ? (cur as Record<string, unknown>)[k] : undefined), o);
}

const json = (body: unknown, status = 200) => Response.json(body, { status });
const ns = (s: string | undefined) => (s === undefined || s === "_" ? "" : s);

async function route(sim: ApiServerSim, req: Request): Promise<Response> {
  const url = new URL(req.url);
  const parts = url.pathname
    .split("/")
    .filter((p) => p !== "")
    .map(decodeURIComponent);
  if (parts[0] !== "_sim") throw new ControlError(404, "not found");
  const text = req.method === "GET" || req.method === "DELETE" ? "" : await req.text();
  const body: unknown = text === "" ? {} : JSON.parse(text);
  const [, what, a, b, c] = parts;
  const key = `${req.method} ${what ?? ""}`;
  switch (key) {
    case "GET info":
      return json({ url: sim.url, port: sim.port, caFile: sim.caFile, adminToken: sim.adminToken });
    case "GET objects": {
      if (a === undefined) throw new ControlError(400, "resource missing");
      if (c !== undefined) {
        const o = sim.store.get(a, ns(b), c);
        return o === undefined ? json({ error: "not found" }, 404) : json(o);
      }
      const q = url.searchParams;
      return json({
        items: sim.store.list(
          a,
          pick({
            namespace: ns(b ?? q.get("namespace") ?? undefined),
            labelSelector: q.get("labelSelector") ?? undefined,
            fieldSelector: q.get("fieldSelector") ?? undefined,
          }),
        ),
      });
    }
    case "POST objects":
      return json(sim.store.create(a ?? "", body, pick({ subresource: url.searchParams.get("subresource") ?? undefined })), 201);
    case "PUT objects":
      return json(sim.store.update(a ?? "", body, pick({ subresource: url.searchParams.get("subresource") ?? undefined })));
    case "PATCH objects": {
      const type = (url.searchParams.get("type") ?? "merge") as PatchKind;
      return json(
        sim.store.patch(a ?? "", ns(b), c ?? "", type, body, pick({ subresource: url.searchParams.get("subresource") ?? undefined })),
      );
    }
    case "DELETE objects":
      return json(sim.store.delete(a ?? "", ns(b), c ?? "").object);
    case "POST tokens": {
      const t = parse(schemas.token, body);
      sim.addToken(t.token, t.user, t.groups, t.uid);
      return json({ ok: true });
    }
    case "POST bootstrap-tokens": {
      const t = parse(schemas.bootstrap, body);
      return json({ token: sim.addBootstrapToken(t.id, t.secret, pick({ expiration: t.expiration, extraGroups: t.extraGroups })) });
    }
    case "POST client-certs": {
      const t = parse(schemas.cert, body);
      return json(await sim.issueClientCert(t.cn, t.orgs, t.expirationSeconds));
    }
    case "POST machines": {
      const t = parse(schemas.machine, body);
      sim.setMachineNode(t.machine, t.node);
      return json({ ok: true });
    }
    case "POST allowed-secrets": {
      const t = parse(schemas.secret, body);
      sim.allowSecret(t.machine, t.secret);
      return json({ ok: true });
    }
    case "POST csrs":
      if (b === "approve") return json(sim.approveCsr(a ?? ""));
      if (b === "deny") return json(sim.denyCsr(a ?? ""));
      if (b === "sign") return json({ certPem: await sim.signCsr(a ?? "") });
      throw new ControlError(404, "unknown csr action");
    case "GET requests":
      return json(sim.requests.slice(Number(url.searchParams.get("since") ?? "0")));
    case "GET counters":
      return json({ ...sim.counters(), openWatches: sim.openWatches(), resourceVersion: sim.store.resourceVersion });
    case "POST compact":
      sim.compact();
      return json({ ok: true });
    case "POST faults": {
      if (a === "fail") {
        const t = parse(schemas.fail, body);
        sim.faults.failNext(
          t.count,
          pick({ status: t.status, retryAfterSeconds: t.retryAfterSeconds, verb: t.verb, resource: t.resource, path: t.path }),
        );
      } else if (a === "hang") {
        const t = parse(schemas.hang, body);
        sim.faults.hangNext(t.count, pick({ ms: t.ms, verb: t.verb, resource: t.resource, path: t.path }));
      } else if (a === "latency") {
        const t = parse(schemas.latency, body);
        sim.faults.setLatency(t.ms, pick({ verb: t.verb, resource: t.resource, path: t.path }));
      } else if (a === "drop-watches") return json({ dropped: sim.faults.dropWatches(parse(schemas.drop, body).abrupt) });
      else if (a === "stall-watches") sim.faults.stallWatches(parse(schemas.stall, body).ms);
      else if (a === "refuse") await sim.faults.refuseConnections(parse(schemas.refuse, body).ms);
      else if (a === "accept") await sim.faults.acceptConnections();
      else if (a === "clear") await sim.faults.clear();
      else throw new ControlError(404, "unknown fault");
      return json({ ok: true });
    }
    case "POST wait": {
      const t = parse(schemas.wait, body);
      const o = await sim.waitFor(
        t.resource,
        t.namespace,
        t.name,
        (x) => {
          if (!t.exists) return x === undefined;
          if (x === undefined) return false;
          return t.field === undefined || JSON.stringify(fieldAt(x, t.field)) === JSON.stringify(t.equals);
        },
        t.timeoutMs,
      );
      return json(o ?? {});
    }
    case "POST kubeconfig": {
      const t = parse(schemas.kubeconfig, body);
      const auth =
        t.clientCert !== undefined
          ? { clientCert: t.clientCert }
          : t.tokenFile !== undefined
            ? { tokenFile: t.tokenFile }
            : { token: t.token ?? sim.adminToken };
      return new Response(sim.kubeconfig(auth, pick({ server: t.server, caPath: t.caPath })), {
        headers: { "content-type": "application/yaml" },
      });
    }
  }
  throw new ControlError(404, `unknown route ${key}`);
}

export interface ControlServer {
  readonly url: string;
  stop(): Promise<void>;
}

/** Serves the control API on 127.0.0.1:`port` (0 = any free port). */
export function startControlServer(sim: ApiServerSim, port: number): ControlServer {
  const server = Bun.serve({
    port,
    hostname: "127.0.0.1",
    fetch: async (req) => {
      try {
        return await route(sim, req);
      } catch (err) {
        if (err instanceof SimApiError) return json(err.toStatus(), err.code);
        if (err instanceof ControlError) return json({ error: err.message }, err.status);
        if (err instanceof WaitTimeoutError) return json({ error: err.message, last: err.last ?? null }, 408);
        if (err instanceof CsrNotReadyError) return json({ error: err.message }, 409);
        if (err instanceof SyntaxError) return json({ error: `bad JSON: ${err.message}` }, 400);
        throw err;
      }
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
}
