import { dirname, isAbsolute, join } from "node:path";
import * as v from "valibot";
import { issueText, quoteName } from "../untrusted/index.ts";
import { parseYaml } from "../config/index.ts";
import { bunReadTextFile, type Credentials, type ReadTextFile } from "./credentials.ts";
import { kubeconfigSchema, type KubeconfigUser } from "./kubeconfig-schema.ts";

/** A kubeconfig (or explicit values) could not be turned into a RestConfig. */
export class KubeconfigError extends Error {
  override readonly name = "KubeconfigError";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

/** Everything needed to reach and authenticate to one API server. PEM strings, never file paths, except `caFile`. */
export interface RestConfig {
  /** Base URL without trailing slash, e.g. `https://api.example:443`. */
  readonly server: string;
  /** Trusted CA bundle (PEM); absent → the system trust store. Verification is always on. */
  readonly caPem?: string;
  /** The CA file path as configured (host path), kept so a written kubeconfig can reference it. */
  readonly caFile?: string;
  readonly tlsServerName?: string;
  readonly clientCertPem?: string;
  readonly clientKeyPem?: string;
  readonly credentials: Credentials;
}

/** Maps a host path (`/var/lib/…`) to where it is on this machine (`<root>/var/lib/…`). */
export type PathResolver = (hostPath: string) => string;

export interface LoadOptions {
  resolvePath?: PathResolver;
  readFile?: ReadTextFile;
  /**
   * The legacy `clientConnection.kubeconfig` path only allows client-certificate-data/key-data,
   * token, tokenFile, username/password: client-cert/key files, exec, auth-provider and
   * impersonation are rejected.
   */
  legacyRestrictions?: boolean;
}

/** `clusters[0].cluster.server` from a valibot issue. */
function issuePath(issue: v.BaseIssue<unknown> | undefined): string {
  let out = "";
  for (const item of issue?.path ?? []) {
    const key: unknown = item.key;
    out += typeof key === "number" ? `[${key}]` : out === "" ? String(key) : `.${String(key)}`;
  }
  return out === "" ? "document" : out;
}

const identity: PathResolver = (p) => p;

/** `https://` is prepended when the server has no scheme; a trailing slash is dropped. */
function normaliseServer(server: string): string {
  const s = /^[a-z][a-z0-9+.-]*:\/\//i.test(server) ? server : `https://${server}`;
  return s.replace(/\/+$/, "");
}

const b64 = (field: string, data: string): string => {
  const clean = data.replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean)) throw new KubeconfigError(`${field}: not valid base64`);
  return Buffer.from(clean, "base64").toString("utf8");
};

async function readPem(field: string, hostPath: string, opts: LoadOptions): Promise<string> {
  const real = (opts.resolvePath ?? identity)(hostPath);
  try {
    return await (opts.readFile ?? bunReadTextFile)(real);
  } catch (err) {
    throw new KubeconfigError(`${field}: cannot read ${hostPath}`, { cause: err });
  }
}

/** Parse kubeconfig text (YAML or JSON). `kubeconfigPath` (host path) anchors relative file references. */
export async function parseKubeconfig(text: string, kubeconfigPath: string, opts: LoadOptions = {}): Promise<RestConfig> {
  let raw: unknown;
  try {
    raw = parseYaml(text, "1.2");
  } catch (err) {
    throw new KubeconfigError(`kubeconfig ${kubeconfigPath}: invalid YAML`, { cause: err });
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new KubeconfigError(`kubeconfig ${kubeconfigPath}: not a mapping`);
  }
  const res = v.safeParse(kubeconfigSchema, raw);
  if (!res.success) {
    const first = res.issues[0];
    throw new KubeconfigError(`kubeconfig ${kubeconfigPath}: ${issuePath(first)}: ${first === undefined ? "invalid" : issueText(first)}`);
  }
  const doc = res.output;
  const ctxName = doc["current-context"];
  if (ctxName === "") throw new KubeconfigError(`kubeconfig ${kubeconfigPath}: current-context is not set`);
  const ctx = doc.contexts.find((c) => c.name === ctxName);
  if (ctx === undefined) throw new KubeconfigError(`kubeconfig ${kubeconfigPath}: context ${quoteName(ctxName)} not found`);
  const clusterIdx = doc.clusters.findIndex((c) => c.name === ctx.context.cluster);
  const cluster = doc.clusters[clusterIdx]?.cluster;
  if (cluster === undefined) {
    throw new KubeconfigError(`kubeconfig ${kubeconfigPath}: cluster ${quoteName(ctx.context.cluster)} not found`);
  }
  const userIdx = doc.users.findIndex((u) => u.name === ctx.context.user);
  const user: KubeconfigUser = doc.users[userIdx]?.user ?? {};
  const cf = `clusters[${clusterIdx}].cluster`;
  const uf = `users[${userIdx}].user`;
  const fileRef = (p: string) => (isAbsolute(p) ? p : join(dirname(kubeconfigPath), p));

  if (cluster["insecure-skip-tls-verify"] === true) {
    throw new KubeconfigError(`kubeconfig ${kubeconfigPath}: ${cf}.insecure-skip-tls-verify is not supported`);
  }
  const rejected = opts.legacyRestrictions
    ? (["client-certificate", "client-key", "exec", "auth-provider", "as", "as-uid", "as-groups", "as-user-extra"] as const)
    : (["exec", "auth-provider", "as", "as-uid", "as-groups", "as-user-extra"] as const);
  for (const f of rejected) {
    if (user[f] !== undefined && user[f] !== null) {
      throw new KubeconfigError(`kubeconfig ${kubeconfigPath}: ${uf}.${f} is not supported`);
    }
  }

  let caPem: string | undefined;
  let caFile: string | undefined;
  if (cluster["certificate-authority-data"] !== undefined) {
    caPem = b64(`${cf}.certificate-authority-data`, cluster["certificate-authority-data"]);
  } else if (cluster["certificate-authority"] !== undefined) {
    caFile = fileRef(cluster["certificate-authority"]);
    caPem = await readPem(`${cf}.certificate-authority`, caFile, opts);
  }

  let clientCertPem: string | undefined;
  let clientKeyPem: string | undefined;
  if (user["client-certificate-data"] !== undefined) {
    clientCertPem = b64(`${uf}.client-certificate-data`, user["client-certificate-data"]);
  } else if (user["client-certificate"] !== undefined) {
    clientCertPem = await readPem(`${uf}.client-certificate`, fileRef(user["client-certificate"]), opts);
  }
  if (user["client-key-data"] !== undefined) {
    clientKeyPem = b64(`${uf}.client-key-data`, user["client-key-data"]);
  } else if (user["client-key"] !== undefined) {
    clientKeyPem = await readPem(`${uf}.client-key`, fileRef(user["client-key"]), opts);
  }
  if ((clientCertPem === undefined) !== (clientKeyPem === undefined)) {
    throw new KubeconfigError(`kubeconfig ${kubeconfigPath}: ${uf}: client certificate and client key must be given together`);
  }

  let credentials: Credentials = { kind: "none" };
  if (user.token !== undefined && user.token !== "") credentials = { kind: "token", token: user.token };
  else if (user.tokenFile !== undefined && user.tokenFile !== "") {
    credentials = { kind: "tokenFile", path: (opts.resolvePath ?? identity)(fileRef(user.tokenFile)) };
  } else if (user.username !== undefined && user.username !== "") {
    credentials = { kind: "basic", username: user.username, password: user.password ?? "" };
  }

  return {
    server: normaliseServer(cluster.server),
    credentials,
    ...(caPem !== undefined ? { caPem } : {}),
    ...(caFile !== undefined ? { caFile } : {}),
    ...(cluster["tls-server-name"] !== undefined ? { tlsServerName: cluster["tls-server-name"] } : {}),
    ...(clientCertPem !== undefined ? { clientCertPem } : {}),
    ...(clientKeyPem !== undefined ? { clientKeyPem } : {}),
  };
}

/** Load a kubeconfig file given by host path (resolved through `resolvePath`). */
export async function loadKubeconfig(hostPath: string, opts: LoadOptions = {}): Promise<RestConfig> {
  const text = await readPem("kubeconfig", hostPath, opts);
  return parseKubeconfig(text, hostPath, opts);
}

export interface ExplicitConfig {
  server: string;
  /** Host path of the CA bundle (the bootstrap path hard-codes `/var/lib/gardener-node-agent/cluster-ca.crt`). */
  caFile?: string;
  caPem?: string;
  /** Host path of a bearer-token file, re-read when it changes (e.g. `credentials/bootstrap-token`). */
  tokenFile?: string;
  token?: string;
}

/** A RestConfig from explicit values — the bootstrap-token path (§7.2 step 2). */
export async function restConfigFromValues(values: ExplicitConfig, opts: LoadOptions = {}): Promise<RestConfig> {
  if (values.server === "") throw new KubeconfigError("apiServer.server: must not be empty");
  let caPem = values.caPem;
  if (caPem === undefined && values.caFile !== undefined) caPem = await readPem("caFile", values.caFile, opts);
  let credentials: Credentials = { kind: "none" };
  if (values.token !== undefined) credentials = { kind: "token", token: values.token };
  else if (values.tokenFile !== undefined) {
    credentials = { kind: "tokenFile", path: (opts.resolvePath ?? identity)(values.tokenFile) };
  }
  return {
    server: normaliseServer(values.server),
    credentials,
    ...(caPem !== undefined ? { caPem } : {}),
    ...(values.caFile !== undefined ? { caFile: values.caFile } : {}),
  };
}
