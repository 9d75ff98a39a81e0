import type { LogFields } from "./types.ts";

const REDACTED = "[redacted]";

/**
 * Normalised keys (lower-case, letters and digits only) whose values are secrets: tokens, keys,
 * passwords, certificates and file or Secret contents. Names are not secrets: `secret` (a Secret's
 * name, `namespace/name`), `secretName` and `tokenFile` are logged; a Secret object logged under
 * `secret` keeps its metadata and loses its `data` and `stringData`.
 */
const SECRET_KEYS = new Set([
  "data",
  "stringdata",
  "content",
  "contents",
  "token",
  "password",
  "bootstraptoken",
  "keydata",
  "certdata",
  "clientkeydata",
  "clientcertificatedata",
  "privatekey",
  "authorization",
]);
/** `clientSecret`, `sharedSecret`, … — but not `secret` itself, which is a name. */
const SECRET_SUFFIXES = ["token", "password", "keydata", "certdata", "privatekey", "secret"];

const normalise = (key: string): string => key.toLowerCase().replace(/[^a-z0-9]/g, "");

/** Answers per key: the keys are the code's own few names, asked on every record (1000-file apply: 1000 records). */
const secretKeyAnswers = new Map<string, boolean>();
const maxRememberedKeys = 512;

/** True for keys whose values must never be logged (`token`, `bootstrapToken`, `client-key-data`, `data`, `clientSecret`, …). */
export const isSecretKey = (key: string): boolean => {
  const known = secretKeyAnswers.get(key);
  if (known !== undefined) return known;
  const k = normalise(key);
  const secret = SECRET_KEYS.has(k) || (k !== "secret" && SECRET_SUFFIXES.some((s) => k.endsWith(s)));
  if (secretKeyAnswers.size < maxRememberedKeys) secretKeyAnswers.set(key, secret);
  return secret;
};

const MAX_DEPTH = 6;

const redactValue = (value: unknown, depth: number): unknown => {
  if (value === null || typeof value !== "object" || value instanceof Error) return value;
  if (depth >= MAX_DEPTH) return "[too deep]";
  if (Array.isArray(value)) return value.map((x) => redactValue(x, depth + 1));
  if (value instanceof Uint8Array) return `[${value.byteLength} bytes]`;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(value)) out[k] = isSecretKey(k) ? REDACTED : redactValue(x, depth + 1);
  return out;
};

/** A copy of `fields` with every secret value (at any depth) replaced by "[redacted]". */
export const redactFields = (fields: LogFields): Record<string, unknown> => redactInto({}, fields);

/** Adds `fields` to `out`, redacted like `redactFields` (one object for a logger's base fields and a record's). */
export const redactInto = (out: Record<string, unknown>, fields: LogFields): Record<string, unknown> => {
  for (const k of Object.keys(fields)) out[k] = isSecretKey(k) ? REDACTED : redactValue(fields[k], 0);
  return out;
};
