/**
 * A URL as it may appear in a message: scheme, host and path only. User info (`user:pass@`), the
 * query (pre-signed storage URLs carry their signature there) and the fragment are left out; the
 * result is escaped and cut like any other name.
 */
export function urlForMessage(url: string | URL): string {
  let parsed: URL;
  try {
    parsed = typeof url === "string" ? new URL(url) : url;
  } catch {
    return "(unparsable URL)";
  }
  const shown = `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  return shown.length > 80 ? `${shown.slice(0, 77)}...` : shown;
}
