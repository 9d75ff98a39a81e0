const REDACTED = "[redacted]";

/** Shorter known values are not searched for: they would blank out ordinary words. */
const minKnownLength = 6;

/**
 * Secret shapes in free text (journal lines, error messages), each replaced by [redacted]:
 * PEM private keys, `Bearer`/`Basic` credentials, JWTs (service account tokens), bootstrap tokens
 * (`abcdef.0123456789abcdef`), and the value after a key named like a secret (`password=…`,
 * `"token": "…"`, `client-key-data: …`).
 */
const shapes: readonly [RegExp, string | ((match: string) => string)][] = [
  [/-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----[\s\S]*?(?:-----END \1PRIVATE KEY-----|$)/g, REDACTED],
  // base64 of "-----BEGIN …PRIVATE KEY" (kubeconfig client-key-data); certificates are not secret.
  [
    /LS0tLS1CRUdJTi[A-Za-z0-9+/]*={0,2}/g,
    (m) => (Buffer.from(m.slice(0, 64), "base64").toString("latin1").includes("PRIVATE KEY") ? REDACTED : m),
  ],
  // The scheme as clients send it; credentials are never shorter than 8 characters ("Bearer token" is prose).
  [/\b(Bearer|Basic|bearer)(\s+)[A-Za-z0-9._~+/=-]{8,}/g, `$1$2${REDACTED}`],
  [/\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g, REDACTED],
  [/\b[a-z0-9]{6}\.[a-z0-9]{16}\b/g, REDACTED],
  [
    /\b([A-Za-z0-9_.-]*(?:password|passwd|secret|token|apikey|api_key|api-key|private_key|privatekey|private-key|access_key|client-key-data|authorization|credentials?|auth)[A-Za-z0-9_.-]*)(["']?\s*[:=]\s*["']?)(?!\[redacted\]|Bearer\b|Basic\b)([^\s"',;&}]+)/gi,
    `$1$2${REDACTED}`,
  ],
];

const regexpLiteral = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** A redactor for free text: the given known secret values first, then the secret shapes. */
export type TextRedactor = (text: string) => string;

/**
 * Builds a redactor from the secret values the caller knows (file contents, tokens, passwords):
 * every occurrence of one is replaced, longest first, then the shapes above are applied.
 */
export function createTextRedactor(knownSecrets: Iterable<string>): TextRedactor {
  const known = [...new Set([...knownSecrets].map((s) => s.trim()).filter((s) => s.length >= minKnownLength))].sort(
    (a, b) => b.length - a.length,
  );
  const knownRe = known.length === 0 ? undefined : new RegExp(known.map(regexpLiteral).join("|"), "g");
  return (text) => {
    let out = knownRe === undefined ? text : text.replace(knownRe, REDACTED);
    for (const [re, replacement] of shapes)
      out = typeof replacement === "string" ? out.replace(re, replacement) : out.replace(re, replacement);
    return out;
  };
}
