import { parse as parseToml, TomlError } from "smol-toml";
import * as v from "valibot";
import type { HostFs } from "../host/index.ts";
import { issuesMessage, quoteName, urlForMessage } from "../untrusted/index.ts";
import { RegistryError } from "./errors.ts";

/** One place to fetch from, as containerd's hosts.toml describes it. */
export interface RegistryEndpoint {
  /** Base URL: scheme://host[:port][/path]. */
  readonly url: string;
  readonly capabilities: readonly ("pull" | "resolve" | "push")[];
  /** The URL already is the API root (no "/v2" appended). */
  readonly overridePath: boolean;
  /** CA bundle (PEM) for this endpoint only. */
  readonly caPem?: string;
}

const CapabilitySchema = v.picklist(["pull", "resolve", "push"]);
const HostSchema = v.object({
  capabilities: v.optional(v.array(CapabilitySchema)),
  ca: v.optional(v.union([v.string(), v.array(v.string())])),
  override_path: v.optional(v.boolean()),
});
const HostsTomlSchema = v.object({
  server: v.optional(v.string()),
  host: v.optional(v.record(v.string(), HostSchema)),
});

export interface ParsedHostsToml {
  readonly server: string | undefined;
  readonly hosts: readonly {
    url: string;
    capabilities: readonly ("pull" | "resolve" | "push")[];
    overridePath: boolean;
    ca: readonly string[];
  }[];
}

/**
 * Decodes containerd's `hosts.toml` (the subset Gardener writes: server, capabilities, ca, override_path).
 * Errors name `file`, the line or the field, never the file's text.
 */
export function parseHostsToml(text: string, file = "hosts.toml"): ParsedHostsToml {
  let raw: unknown;
  try {
    raw = parseToml(text);
  } catch (err) {
    // The parser's message quotes the offending lines: only its position is kept, and no cause.
    const at = err instanceof TomlError ? ` at line ${err.line}, column ${err.column}` : "";
    throw new RegistryError(`${file}: invalid TOML${at}`);
  }
  const r = v.safeParse(HostsTomlSchema, raw);
  if (!r.success) throw new RegistryError(`${file}: invalid hosts.toml: ${issuesMessage(r.issues)}`);
  const hosts = Object.entries(r.output.host ?? {}).map(([url, h]) => ({
    url,
    capabilities: h.capabilities ?? ["pull", "resolve"],
    overridePath: h.override_path ?? false,
    ca: h.ca === undefined ? [] : typeof h.ca === "string" ? [h.ca] : h.ca,
  }));
  return { server: r.output.server, hosts };
}

/** Where to fetch a registry's content: mirrors in order, then the server (undefined: the registry itself). */
export interface RegistryHosts {
  readonly mirrors: readonly RegistryEndpoint[];
  readonly server: RegistryEndpoint | undefined;
}

/**
 * Endpoints for `registry` from `<hostsDir>/<registry>/hosts.toml` (else `<hostsDir>/_default/`);
 * no mirrors when neither file exists. CA paths are read through HostFs, relative ones against the
 * registry's directory. `pending` (registry name → hosts.toml text) stands in for files not written yet.
 */
export async function loadRegistryHosts(
  hostFs: HostFs,
  hostsDir: string,
  registry: string,
  pending?: ReadonlyMap<string, string>,
): Promise<RegistryHosts> {
  for (const name of [registry, "_default"]) {
    const dir = `${hostsDir}/${name}`;
    const text = pending?.get(name) ?? (await hostFs.readText(`${dir}/hosts.toml`));
    if (text === undefined) continue;
    const parsed = parseHostsToml(text, `${dir}/hosts.toml`);
    const mirrors: RegistryEndpoint[] = [];
    for (const h of parsed.hosts) {
      const pems: string[] = [];
      for (const path of h.ca) {
        const pem = await hostFs.readText(path.startsWith("/") ? path : `${dir}/${path}`);
        if (pem === undefined)
          throw new RegistryError(
            `CA file ${quoteName(path)} of mirror ${quoteName(urlForMessage(h.url))} (${dir}/hosts.toml) does not exist`,
          );
        pems.push(pem);
      }
      mirrors.push({
        url: h.url,
        capabilities: h.capabilities,
        overridePath: h.overridePath,
        ...(pems.length > 0 ? { caPem: pems.join("\n") } : {}),
      });
    }
    const server =
      parsed.server !== undefined && parsed.server !== ""
        ? { url: parsed.server, capabilities: ["pull", "resolve", "push"] as const, overridePath: false }
        : undefined;
    return { mirrors, server };
  }
  return { mirrors: [], server: undefined };
}
