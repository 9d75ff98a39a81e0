import type { NodeAgentConfiguration } from "../config/index.ts";
import type { HostFs } from "../host/index.ts";
import type { Osc } from "../osc/index.ts";

/** Where a managed file's content comes from, as the OSC says. */
type FileSource = "inline" | "secretRef" | "imageRef" | "token" | "credentials";

/** One managed file as the bundle lists it: never its content. */
export interface ManagedFile {
  readonly path: string;
  readonly source: FileSource;
  /** On disk: "0644", or "missing". */
  readonly mode: string;
  readonly size?: number;
  /** Withheld for secret files: a digest of a short secret can be guessed back. */
  readonly sha256?: string;
  /** Why the file counts as secret (its values are redacted wherever they appear); absent for others. */
  readonly secret?: string;
}

/** What the node knows is secret: the files (listed without digest) and the values inside them. */
export interface NodeSecrets {
  readonly files: readonly ManagedFile[];
  readonly values: ReadonlySet<string>;
}

/** Files larger than this are not read for values (no credential is that large). */
const maxSecretFileBytes = 1 << 20;

/**
 * The agent's own credential files (spec bootstrap-and-config.md §2) and the other kubeconfigs and
 * keys on a node; each is secret whatever its mode.
 */
async function credentialPaths(): Promise<Map<string, string>> {
  const c = await import("../credentials/index.ts");
  const { registryAuthPath } = await import("../registry/index.ts");
  return new Map([
    [c.kubeconfigPath, "kubeconfig"],
    [c.bootstrapTokenPath, "bootstrap token"],
    [c.legacyTokenPath, "token file"],
    [c.pendingKeyPath, "private key"],
    [c.kubeletBootstrapKubeconfigPath, "kubeconfig"],
    [c.kubeletRealKubeconfigPath, "kubeconfig"],
    [c.kubeletClientCertPath, "private key"],
    [registryAuthPath, "registry credentials"],
  ]);
}

/** Keys whose string values are secret beyond what the log redaction knows (docker config `auth`). */
const extraSecretKeys = new Set(["auth", "identitytoken", "registrytoken"]);

/** Every string at a secret key of a parsed document (kubeconfig `token`, `client-key-data`, registry `password`, …). */
function secretLeaves(doc: unknown, isSecretKey: (k: string) => boolean, into: Set<string>, depth = 0): void {
  if (depth > 12 || doc === null || typeof doc !== "object") return;
  for (const [k, v] of Object.entries(doc)) {
    if (typeof v === "string" && (isSecretKey(k) || extraSecretKeys.has(k.toLowerCase()))) {
      into.add(v);
      // docker config `auth` is base64 of user:password.
      if (k.toLowerCase() === "auth") {
        const plain = Buffer.from(v, "base64").toString("utf8");
        const colon = plain.indexOf(":");
        if (colon >= 0) into.add(plain.slice(colon + 1));
      }
    } else if (typeof v === "object") secretLeaves(v, isSecretKey, into, depth + 1);
  }
}

/**
 * The whole text, each line, each value after `=` or `:` of a line, and each word of 8 characters or
 * more: for files that are secret throughout (a token, a password, a key).
 */
function textValues(text: string, into: Set<string>): void {
  into.add(text.trim());
  for (const word of text.split(/[\s"',;=:]+/)) if (word.length >= 8) into.add(word);
  for (const line of text.split("\n")) {
    const t = line.trim();
    if (t === "") continue;
    into.add(t);
    const m = /^[^=:]*[=:]\s*["']?(.*?)["']?\s*$/.exec(t);
    if (m?.[1] !== undefined) into.add(m[1]);
  }
}

/**
 * The values of a secret file: a structured file (YAML, JSON: kubeconfigs, registry-auth.json,
 * kubelet's config) gives the strings at secret keys, and every string value if it came from a Secret;
 * any other file (a token, a password list, a key) gives its text, lines and `key=value` values.
 */
async function valuesOf(text: string, wholeFile: boolean, into: Set<string>): Promise<void> {
  const { parse } = await import("yaml");
  const { isSecretKey } = await import("../log/redact.ts");
  let doc: unknown;
  try {
    doc = parse(text);
  } catch {
    // Not YAML: a secret in its own format; treated as text below.
    doc = undefined;
  }
  if (doc !== null && typeof doc === "object") {
    // Every value of a document from a Secret is secret; its keys (apiVersion, clusters, …) are not.
    secretLeaves(doc, wholeFile ? () => true : isSecretKey, into);
  } else {
    textValues(text, into);
  }
}

/** Streamed: managed files include binaries (kubelet, imageRef files) of 100 MB and more. */
async function sha256Of(realPath: string): Promise<string> {
  const h = new Bun.CryptoHasher("sha256");
  for await (const chunk of Bun.file(realPath).stream()) h.update(chunk);
  return h.digest("hex");
}

const modeText = (mode: number): string => mode.toString(8).padStart(4, "0");

/**
 * The managed files (last-applied OSC, token files of the config, the agent's credentials) with mode,
 * size and sha256 from disk, and the secret values of those that are secret: from a Secret
 * (`secretRef`), mode 0600 or stricter (as the OSC asks or as on disk), token files, kubeconfigs,
 * registry-auth.json, bootstrap token, private keys.
 */
export async function collectNodeSecrets(
  host: HostFs,
  osc: Osc | undefined,
  hostName: string,
  config: NodeAgentConfiguration | undefined,
  extraKubeconfigs: readonly string[],
): Promise<NodeSecrets> {
  const { allFiles } = await import("../controllers/operatingsystemconfig/plan/merge.ts");
  const wanted = new Map<string, { source: FileSource; secret?: string; requestedMode?: number }>();
  for (const f of osc === undefined ? [] : allFiles(osc, hostName)) {
    const source: FileSource = f.content.secretRef !== undefined ? "secretRef" : f.content.imageRef !== undefined ? "imageRef" : "inline";
    const requestedMode = f.permissions ?? 0o644;
    const secret =
      source === "secretRef"
        ? `from Secret ${f.content.secretRef?.name ?? ""}`
        : (requestedMode & 0o077) === 0
          ? `mode ${modeText(requestedMode)}`
          : undefined;
    wanted.set(f.path, { source, ...(secret !== undefined ? { secret } : {}), requestedMode });
  }
  for (const s of config?.controllers.token.syncConfigs ?? []) wanted.set(s.path, { source: "token", secret: "token file" });
  for (const [path, why] of await credentialPaths()) if (!wanted.has(path)) wanted.set(path, { source: "credentials", secret: why });
  for (const path of extraKubeconfigs) if (path !== "") wanted.set(path, { source: "credentials", secret: "kubeconfig" });

  const values = new Set<string>();
  const files: ManagedFile[] = [];
  for (const [path, w] of [...wanted].sort(([a], [b]) => a.localeCompare(b))) {
    const info = await host.stat(path).catch(() => undefined);
    if (info === undefined || info.kind !== "file") {
      // Credentials that are not there are not managed files: list only what the OSC or config names.
      if (w.source !== "credentials") files.push({ path, source: w.source, mode: info === undefined ? "missing" : info.kind });
      continue;
    }
    const secret = w.secret ?? ((info.mode & 0o077) === 0 ? `mode ${modeText(info.mode)} on disk` : undefined);
    if (secret !== undefined) {
      const data = info.size <= maxSecretFileBytes ? await host.readFile(path) : undefined;
      if (data !== undefined) await valuesOf(new TextDecoder().decode(data), w.source === "secretRef" || w.source === "token", values);
      files.push({ path, source: w.source, mode: modeText(info.mode), size: info.size, secret });
      continue;
    }
    files.push({ path, source: w.source, mode: modeText(info.mode), size: info.size, sha256: await sha256Of(host.resolve(path)) });
  }
  return { files, values };
}
