import * as v from "valibot";
import type { HostFs } from "../host/index.ts";
import type { Credentials } from "./auth.ts";
import { registryEndpoint } from "./reference.ts";
import { RegistryError } from "./errors.ts";

/** Where an OSC delivers registry credentials for imageRef pulls (docker config.json format). */
export const registryAuthPath = "/var/lib/gardener-node-agent/registry-auth.json";

/**
 * Why a credentials file with permission bits `mode` is refused, or undefined when it is fine: group and
 * others get no access at all (read, write or execute; as ssh asks of a private key); the owner's bits are the owner's.
 */
export function registryAuthModeProblem(mode: number): string | undefined {
  if ((mode & 0o077) === 0) return undefined;
  return `mode ${(mode & 0o7777).toString(8).padStart(4, "0")} gives group or others access to registry credentials, want 0600`;
}

const authEntrySchema = v.object({
  auth: v.optional(v.string()),
  username: v.optional(v.string()),
  password: v.optional(v.string()),
  identitytoken: v.optional(v.string()),
});
const dockerConfigSchema = v.object({ auths: v.optional(v.record(v.string(), authEntrySchema)) });

/** The credentials file is unusable; the message names the file and the entry, never a secret. */
export class RegistryAuthConfigError extends RegistryError {
  override readonly name: string = "RegistryAuthConfigError";
}

/**
 * The registry host[:port] a docker config key stands for: "https://index.docker.io/v1/" → the Docker
 * Hub endpoint, "http://127.0.0.1:5000" → "127.0.0.1:5000", "ghcr.io" → "ghcr.io".
 */
export function dockerConfigKeyHost(key: string): string {
  const withoutScheme = key.replace(/^[a-z][a-z0-9+.-]*:\/\//i, "");
  const host = (withoutScheme.split("/")[0] ?? "").toLowerCase();
  // Docker Hub's historical key names its index; pulls talk to its registry endpoint.
  return registryEndpoint(host === "index.docker.io" ? "docker.io" : host);
}

/**
 * Parses docker config JSON (`{"auths": {...}}`) into credentials per registry host[:port]. An entry
 * may carry `auth` (base64 "user:password"), `username`/`password`, or `identitytoken` (an OAuth2
 * refresh token for Bearer registries). `source` names the file in errors.
 */
export function parseDockerConfig(text: string, source: string): Record<string, Credentials> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new RegistryAuthConfigError(`${source}: not valid JSON`);
  }
  const parsed = v.safeParse(dockerConfigSchema, raw);
  if (!parsed.success) {
    const where = v.getDotPath(parsed.issues[0]) ?? "(root)";
    throw new RegistryAuthConfigError(`${source}: invalid field "${where}"`);
  }
  const out: Record<string, Credentials> = {};
  for (const [key, entry] of Object.entries(parsed.output.auths ?? {})) {
    const host = dockerConfigKeyHost(key);
    if (host === "") throw new RegistryAuthConfigError(`${source}: auths key "${key}" names no registry`);
    out[host] = entryCredentials(entry, `${source}: auths["${key}"]`);
  }
  return out;
}

function entryCredentials(entry: v.InferOutput<typeof authEntrySchema>, where: string): Credentials {
  let username = entry.username ?? "";
  let password = entry.password ?? "";
  if (entry.auth !== undefined && entry.auth !== "") {
    const decoded = decodeAuth(entry.auth, where);
    const colon = decoded.indexOf(":");
    if (colon < 0) throw new RegistryAuthConfigError(`${where}.auth is not base64 of "user:password"`);
    username = decoded.slice(0, colon);
    password = decoded.slice(colon + 1);
  }
  const identityToken = entry.identitytoken;
  if (identityToken !== undefined && identityToken !== "") return { username, password, identityToken };
  if (username === "" && password === "")
    throw new RegistryAuthConfigError(`${where} has neither auth, username/password nor identitytoken`);
  return { username, password };
}

function decodeAuth(auth: string, where: string): string {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(auth) || auth.length % 4 === 1) throw new RegistryAuthConfigError(`${where}.auth is not base64`);
  return Buffer.from(auth, "base64").toString("utf8");
}

/**
 * Reads the credentials file on every call (it is an OSC file and may appear, change or go at any
 * time; it is small). Missing → no credentials. A file group or others may access is refused.
 */
export async function loadRegistryCredentials(host: HostFs, path = registryAuthPath): Promise<Record<string, Credentials>> {
  const st = await host.stat(path);
  if (st === undefined) return {};
  const problem = registryAuthModeProblem(st.mode);
  if (problem !== undefined) throw new RegistryAuthConfigError(`${path}: ${problem}`);
  const text = await host.readText(path);
  if (text === undefined) return {};
  return parseDockerConfig(text, path);
}
