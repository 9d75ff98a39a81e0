import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { selfSignedCert } from "../self-signed.ts";

export interface TokenServer {
  readonly realm: string;
  readonly service: string;
  readonly issuer: string;
  /** PEM of the self-signed certificate docker-registry trusts (`rootcertbundle`). */
  readonly certPath: string;
  /** Token requests seen, in order (scope + whether Basic credentials were sent). */
  readonly requests: readonly { scope: string | null; basic: boolean }[];
  stop(): Promise<void>;
}

export interface TokenServerOptions {
  /** Directory for the key and certificate. */
  readonly dir: string;
  /** When set, token requests must carry these Basic credentials (else 401). */
  readonly credentials?: { readonly username: string; readonly password: string };
}

const b64url = (data: Uint8Array | string) => Buffer.from(data).toString("base64url");

/**
 * A Docker token-auth server for docker-registry's `auth: token:` mode: signs ES256 JWTs with an
 * `x5c` header (self-signed cert that is also the registry's root bundle) and grants every
 * requested action.
 */
export async function startTokenServer(options: TokenServerOptions): Promise<TokenServer> {
  const keyPath = join(options.dir, "token.key");
  const certPath = join(options.dir, "token.crt");
  selfSignedCert({ commonName: "test-token-issuer", keyPath, certPath, days: 2 });
  const pkcs8 = spawnSync("openssl", ["pkcs8", "-topk8", "-nocrypt", "-in", keyPath, "-outform", "DER"]);
  if (pkcs8.status !== 0) throw new Error("openssl pkcs8 failed");
  const key = await crypto.subtle.importKey("pkcs8", new Uint8Array(pkcs8.stdout), { name: "ECDSA", namedCurve: "P-256" }, false, ["sign"]);
  const certDer = Buffer.from(
    readFileSync(certPath, "utf8")
      .replace(/-----(BEGIN|END) CERTIFICATE-----/g, "")
      .replace(/\s+/g, ""),
    "base64",
  );
  const service = "test-registry";
  const issuer = "test-issuer";
  const requests: { scope: string | null; basic: boolean }[] = [];

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const auth = req.headers.get("authorization");
      const scope = url.searchParams.get("scope");
      requests.push({ scope, basic: auth?.startsWith("Basic ") ?? false });
      if (options.credentials !== undefined) {
        const want = `Basic ${Buffer.from(`${options.credentials.username}:${options.credentials.password}`).toString("base64")}`;
        if (auth !== want) return new Response("bad credentials", { status: 401 });
      }
      const access = (scope ?? "")
        .split(" ")
        .filter((s) => s !== "")
        .map((s) => {
          const [type, ...rest] = s.split(":");
          const actions = (rest.pop() ?? "").split(",");
          return { type, name: rest.join(":"), actions };
        });
      const now = Math.floor(Date.now() / 1000);
      const header = { alg: "ES256", typ: "JWT", x5c: [certDer.toString("base64")] };
      const claims = { iss: issuer, sub: "test", aud: service, exp: now + 300, nbf: now - 10, iat: now, jti: crypto.randomUUID(), access };
      const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
      const sig = new Uint8Array(await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, key, new TextEncoder().encode(input)));
      const token = `${input}.${b64url(sig)}`;
      return Response.json({ token, access_token: token, expires_in: 300, issued_at: new Date().toISOString() });
    },
  });
  return {
    realm: `http://127.0.0.1:${server.port}/token`,
    service,
    issuer,
    certPath,
    requests,
    async stop() {
      await server.stop(true);
    },
  };
}
