import type { LogFields } from "./types.ts";

export const REDACTED = "[redacted]";

/** Normalised keys (lower-case, letters and digits only) whose values are secrets. */
const SECRET_KEYS = new Set([
  "data",
  "token",
  "password",
  "bootstraptoken",
  "keydata",
  "certdata",
  "clientkeydata",
  "clientcertificatedata",
  "privatekey",
  "authorization",
  "secret",
]);
const SECRET_SUFFIXES = ["token", "password", "keydata", "certdata", "privatekey"];

const normalise = (key: string): string => key.toLowerCase().replace(/[^a-z0-9]/g, "");

/** True for keys whose values must never be logged (`token`, `bootstrapToken`, `client-key-data`, `data`, …). */
export const isSecretKey = (key: string): boolean => {
  const k = normalise(key);
  return SECRET_KEYS.has(k) || SECRET_SUFFIXES.some((s) => k.endsWith(s));
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
export const redactFields = (fields: LogFields): Record<string, unknown> => {
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(fields)) out[k] = isSecretKey(k) ? REDACTED : redactValue(x, 0);
  return out;
};
