/** A parsed `WWW-Authenticate` challenge. */
export interface Challenge {
  readonly scheme: "bearer" | "basic" | "other";
  readonly params: Readonly<Record<string, string>>;
}

/**
 * Parses a WWW-Authenticate header value (single challenge, as registries send it):
 * `Bearer realm="https://auth/token",service="registry",scope="repository:x:pull"`.
 */
export function parseChallenge(header: string): Challenge {
  const trimmed = header.trim();
  const space = trimmed.indexOf(" ");
  const schemeText = (space < 0 ? trimmed : trimmed.slice(0, space)).toLowerCase();
  const scheme = schemeText === "bearer" ? "bearer" : schemeText === "basic" ? "basic" : "other";
  const params: Record<string, string> = {};
  const re = /([A-Za-z][\w-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))/g;
  const rest = space < 0 ? "" : trimmed.slice(space + 1);
  for (const m of rest.matchAll(re)) {
    const key = m[1];
    if (key !== undefined) params[key.toLowerCase()] = m[2] !== undefined ? m[2].replace(/\\(.)/g, "$1") : (m[3] ?? "");
  }
  return { scheme, params };
}

export interface Credentials {
  readonly username: string;
  readonly password: string;
  /** An OAuth2 refresh token (docker config `identitytoken`): exchanged at the token realm for Bearer registries. */
  readonly identityToken?: string;
}

export function basicAuthorization(c: Credentials): string {
  return `Basic ${Buffer.from(`${c.username}:${c.password}`).toString("base64")}`;
}
