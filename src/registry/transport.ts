import * as v from "valibot";
import { quoteName, urlForMessage } from "../untrusted/index.ts";
import { basicAuthorization, parseChallenge } from "./auth.ts";
import type { Credentials } from "./auth.ts";
import { responseErrorCodes } from "./error-body.ts";
import type { RegistryEndpoint } from "./hosts.ts";
import { TokenResponseSchema } from "./manifest.ts";
import { registryEndpoint } from "./reference.ts";
import { RegistryError } from "./errors.ts";
import { errorText } from "../log/index.ts";

export type FetchFn = (input: string | URL | Request, init?: BunFetchRequestInit) => Promise<Response>;

export interface TransportOptions {
  /** Injected for tests; defaults to the global fetch. */
  readonly fetch?: FetchFn;
  /** Extra CA bundle (PEM) trusted for registry and token endpoints. */
  readonly caPem?: string;
  /** Registries (host or host:port) spoken to over plain HTTP, e.g. ["127.0.0.1:5000"]. Nothing else is. */
  readonly plainHttpHosts?: readonly string[];
  /** Credentials per registry host[:port], used for Basic auth and for Bearer token requests. */
  readonly credentials?: Readonly<Record<string, Credentials>>;
  /**
   * Read when a registry asks for credentials (after `credentials`, which win): e.g. the docker config
   * file an OSC delivers, which may appear or change while the agent runs.
   */
  readonly credentialSource?: () => Promise<Readonly<Record<string, Credentials>>>;
}

export interface RegistryRequest {
  readonly registry: string;
  readonly repository: string;
  /** "/v2/…" path or an absolute URL (upload locations). */
  readonly path: string;
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: Uint8Array | string;
  /** Token scope actions; pushes need "pull,push". */
  readonly actions?: "pull" | "pull,push";
  /** A mirror (or configured server) to send a "/v2/…" path to instead of the registry itself. */
  readonly endpoint?: RegistryEndpoint;
  /** Follow redirects (blob downloads), dropping credentials when the origin changes. */
  readonly followRedirects?: boolean;
  readonly signal?: AbortSignal;
}

/**
 * The registry answered with an error status. `url` names what was asked for (a URL shown without
 * user info or query, or an image and digest); `detail` is this project's text or the error codes
 * of the body, never the body itself.
 */
export class RegistryHttpError extends RegistryError {
  override readonly name: string = "RegistryHttpError";
  constructor(
    readonly status: number,
    readonly url: string,
    detail: string,
  ) {
    super(`${url}: HTTP ${status}${detail === "" ? "" : `: ${detail}`}`);
  }
}

export interface Transport {
  /** Sends one request with registry auth handled (challenge → token/basic → one retry). */
  send(req: RegistryRequest): Promise<Response>;
  /** The base URL ("https://host:port") for a registry name. */
  baseUrl(registry: string): string;
}

const MAX_REDIRECTS = 5;

const codesSuffix = (codes: string): string => (codes === "" ? "" : ` (${codes})`);

/** The request never got an HTTP answer (DNS, connection, TLS); `cause` holds the fetch error. */
export class RegistryUnreachableError extends RegistryError {
  override readonly name: string = "RegistryUnreachableError";
  constructor(
    readonly url: string,
    cause: unknown,
  ) {
    super(`${url}: ${errorText(cause)}`, { cause });
  }
}

/** The OAuth2 refresh-token grant docker sends for an `identitytoken` (distribution's token spec). */
function refreshTokenForm(refreshToken: string, params: URLSearchParams): string {
  const form = new URLSearchParams({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: "gardener-node-agent" });
  for (const key of ["service", "scope"]) {
    const value = params.get(key);
    if (value !== null) form.set(key, value);
  }
  return form.toString();
}

export function createTransport(options: TransportOptions = {}): Transport {
  const rawFetch: FetchFn = options.fetch ?? fetch;
  const doFetch: FetchFn = async (input, init) => {
    try {
      return await rawFetch(input, init);
    } catch (err) {
      if (init?.signal?.aborted) throw err; // cancellation stays cancellation
      throw new RegistryUnreachableError(new URL(String(input)).origin, err);
    }
  };
  const plain = new Set(options.plainHttpHosts ?? []);
  /** Authorization header values that worked, by registry + scope; re-challenged on a 401. */
  const authCache = new Map<string, string>();

  const baseUrl = (registry: string): string => {
    const endpoint = registryEndpoint(registry);
    const host = endpoint.replace(/:\d+$/, "");
    return `${plain.has(endpoint) || plain.has(host) ? "http" : "https"}://${endpoint}`;
  };

  const urlFor = (req: RegistryRequest): string => {
    if (!req.path.startsWith("/")) return req.path;
    if (req.endpoint === undefined) return `${baseUrl(req.registry)}${req.path}`;
    const base = req.endpoint.url.replace(/\/+$/, "");
    return req.endpoint.overridePath ? `${base}${req.path.replace(/^\/v2(?=\/)/, "")}` : `${base}${req.path}`;
  };

  const tlsInit = (req: RegistryRequest): BunFetchRequestInit => {
    const ca = req.endpoint?.caPem ?? options.caPem;
    return ca !== undefined ? { tls: { ca } } : {};
  };

  async function authorize(req: RegistryRequest, url: string, challengeHeader: string, scope: string): Promise<string> {
    const challenge = parseChallenge(challengeHeader);
    const creds = await credentialsFor(req, url);
    if (challenge.scheme === "basic") {
      if (creds === undefined)
        throw new RegistryHttpError(401, urlForMessage(url), `registry ${req.registry} wants basic auth and no credentials are configured`);
      return basicAuthorization(creds);
    }
    // The scheme only: a challenge's parameters are the server's text.
    if (challenge.scheme !== "bearer")
      throw new RegistryHttpError(401, urlForMessage(url), `unsupported auth scheme ${quoteName(challenge.scheme)}`);
    const realm = challenge.params["realm"];
    if (realm === undefined) throw new RegistryHttpError(401, urlForMessage(url), "bearer challenge without realm");
    const tokenUrl = new URL(realm);
    if (challenge.params["service"] !== undefined) tokenUrl.searchParams.set("service", challenge.params["service"]);
    tokenUrl.searchParams.set("scope", scope);
    const res =
      creds?.identityToken !== undefined
        ? await doFetch(`${tokenUrl.origin}${tokenUrl.pathname}`, {
            method: "POST",
            headers: { "content-type": "application/x-www-form-urlencoded" },
            body: refreshTokenForm(creds.identityToken, tokenUrl.searchParams),
            ...(req.signal ? { signal: req.signal } : {}),
            ...tlsInit(req),
          })
        : await doFetch(tokenUrl.toString(), {
            headers: creds !== undefined ? { authorization: basicAuthorization(creds) } : {},
            ...(req.signal ? { signal: req.signal } : {}),
            ...tlsInit(req),
          });
    const where = urlForMessage(tokenUrl);
    if (!res.ok) throw new RegistryHttpError(res.status, where, `token request failed${codesSuffix(await responseErrorCodes(res))}`);
    const parsed = v.safeParse(TokenResponseSchema, await res.json().catch(() => undefined));
    const token = parsed.success ? (parsed.output.token ?? parsed.output.access_token) : undefined;
    if (token === undefined || token === "") throw new RegistryHttpError(res.status, where, "token response has no token");
    return `Bearer ${token}`;
  }

  /** Registry credentials go to the registry (or its configured server); a mirror needs its own entry. */
  async function credentialsFor(req: RegistryRequest, url: string): Promise<Credentials | undefined> {
    const pick = (all: Readonly<Record<string, Credentials>> | undefined): Credentials | undefined =>
      all?.[new URL(url).host] ?? (req.endpoint === undefined ? (all?.[registryEndpoint(req.registry)] ?? all?.[req.registry]) : undefined);
    return pick(options.credentials) ?? (options.credentialSource === undefined ? undefined : pick(await options.credentialSource()));
  }

  async function once(req: RegistryRequest, url: string, authorization: string | undefined): Promise<Response> {
    let target = url;
    let auth = authorization;
    for (let hop = 0; ; hop++) {
      const headers: Record<string, string> = { ...req.headers };
      if (auth !== undefined) headers["authorization"] = auth;
      const res = await doFetch(target, {
        method: req.method ?? "GET",
        headers,
        ...(req.body !== undefined ? { body: req.body } : {}),
        redirect: "manual",
        ...(req.signal ? { signal: req.signal } : {}),
        ...tlsInit(req),
      });
      const location = res.headers.get("location");
      if (!req.followRedirects || res.status < 300 || res.status >= 400 || location === null) return res;
      if (hop >= MAX_REDIRECTS) throw new RegistryHttpError(res.status, urlForMessage(target), "too many redirects");
      await res.body?.cancel();
      const next = new URL(location, target);
      // Credentials are for the registry only, never for the storage backend it redirects to.
      if (next.origin !== new URL(target).origin) auth = undefined;
      target = next.toString();
    }
  }

  return {
    baseUrl,
    async send(req) {
      const url = urlFor(req);
      const scope = `repository:${req.repository}:${req.actions ?? "pull"}`;
      const key = `${new URL(url).origin}|${scope}`;
      const cached = authCache.get(key);
      const first = await once(req, url, cached);
      const challenge = first.headers.get("www-authenticate");
      if (first.status !== 401 || challenge === null) return first;
      await first.body?.cancel();
      const authorization = await authorize(req, url, challenge, scope);
      const second = await once(req, url, authorization);
      if (second.status === 401) {
        authCache.delete(key);
        throw new RegistryHttpError(401, urlForMessage(url), (await responseErrorCodes(second)) || "unauthorized");
      }
      authCache.set(key, authorization);
      return second;
    },
  };
}
