/** Authentication: client certificates from the sim CA, static bearer tokens, bootstrap tokens stored as Secrets. */
import type { UserInfo } from "./user.ts";
import type { SimStore } from "./store.ts";
import { anonymousUser } from "./user.ts";
import { isObj } from "./merge-patch.ts";

/** The verified client certificate of a connection (subject CN and O, SHA-256 of the DER certificate in hex). */
export interface CertIdentity {
  readonly cn: string;
  readonly orgs: readonly string[];
  readonly sha256?: string;
}

/** The x509 authenticator's credential ID (kube-apiserver ≥ 1.32), kept in the user's extra. */
const CREDENTIAL_ID = "authentication.kubernetes.io/credential-id";

function certUser(cert: CertIdentity): UserInfo {
  const u = { name: cert.cn, groups: [...cert.orgs] };
  return cert.sha256 === undefined ? u : { ...u, extra: { [CREDENTIAL_ID]: [`X509SHA256=${cert.sha256}`] } };
}

const BOOTSTRAP_TOKEN_RE = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
const AUTHENTICATED = "system:authenticated";

export type AuthnResult = { ok: true; user: UserInfo } | { ok: false };

function withAuthenticated(u: UserInfo): UserInfo {
  return u.groups.includes(AUTHENTICATED) ? u : { ...u, groups: [...u.groups, AUTHENTICATED] };
}

function decode(data: Record<string, unknown>, k: string): string | undefined {
  const v = data[k];
  return typeof v === "string" ? Buffer.from(v, "base64").toString("utf8") : undefined;
}

/** The bootstrap-token authenticator: Secret kube-system/bootstrap-token-<id> of type bootstrap.kubernetes.io/token. */
function bootstrapUser(store: SimStore, token: string, nowMs: number): UserInfo | undefined {
  const m = BOOTSTRAP_TOKEN_RE.exec(token);
  if (!m) return undefined;
  const [, id, secret] = m as unknown as [string, string, string];
  const s = store.get("secrets", "kube-system", `bootstrap-token-${id}`);
  if (s === undefined || s["type"] !== "bootstrap.kubernetes.io/token") return undefined;
  if (isObj(s["metadata"]) && s["metadata"]["deletionTimestamp"] !== undefined) return undefined;
  const data = isObj(s["data"]) ? s["data"] : {};
  if (decode(data, "token-id") !== id || decode(data, "token-secret") !== secret) return undefined;
  if (decode(data, "usage-bootstrap-authentication") !== "true") return undefined;
  const exp = decode(data, "expiration");
  if (exp !== undefined && Date.parse(exp) <= nowMs) return undefined;
  const extra = (decode(data, "auth-extra-groups") ?? "")
    .split(",")
    .map((g) => g.trim())
    .filter((g) => g !== "");
  return { name: `system:bootstrap:${id}`, groups: ["system:bootstrappers", ...extra] };
}

export interface AuthnConfig {
  readonly tokens: ReadonlyMap<string, UserInfo>;
  readonly store: SimStore;
  readonly anonymous: boolean;
  readonly nowMs: number;
}

/** Union of authenticators in kube-apiserver order: x509 first, then tokens; no credentials → anonymous or 401. */
export function authenticate(authorization: string | null, cert: CertIdentity | undefined, cfg: AuthnConfig): AuthnResult {
  if (cert !== undefined) return { ok: true, user: withAuthenticated(certUser(cert)) };
  if (authorization !== null) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!m) return { ok: false };
    const token = m[1]!;
    const u = cfg.tokens.get(token) ?? bootstrapUser(cfg.store, token, cfg.nowMs);
    return u === undefined ? { ok: false } : { ok: true, user: withAuthenticated(u) };
  }
  return cfg.anonymous ? { ok: true, user: anonymousUser } : { ok: false };
}

/** The Secret the bootstrap-token authenticator reads (what kubeadm / gardener write). */
export function bootstrapTokenSecret(
  id: string,
  secret: string,
  opts: { expiration?: string; extraGroups?: string[] } = {},
): Record<string, unknown> {
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  const data: Record<string, string> = {
    "token-id": b64(id),
    "token-secret": b64(secret),
    "usage-bootstrap-authentication": b64("true"),
    "usage-bootstrap-signing": b64("true"),
  };
  if (opts.expiration !== undefined) data["expiration"] = b64(opts.expiration);
  if (opts.extraGroups !== undefined && opts.extraGroups.length > 0) data["auth-extra-groups"] = b64(opts.extraGroups.join(","));
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: `bootstrap-token-${id}`, namespace: "kube-system" },
    type: "bootstrap.kubernetes.io/token",
    data,
  };
}
